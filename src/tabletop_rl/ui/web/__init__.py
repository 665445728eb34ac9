"""The browser face of tabletop_rl (``tabletop web``, extra ``[web]``): ``views`` draws recorded games per viewer,
``play`` keeps the games a person plays, ``app`` serves both with the page in ``static/``."""

__all__: list[str] = []
