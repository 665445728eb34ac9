"""A Splendor position drawn as an RGB image (``render_rgb``), for ``render_mode="rgb_array"`` and videos.

It shows what one viewer may see, as the text board does (``render.render_ansi``).

>>> from tabletop_rl import SplendorGame
>>> render_rgb(SplendorGame(seed=3)).shape
(720, 960, 3)
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from tabletop_rl.games.splendor import rules as R
from tabletop_rl.games.splendor.render import _check_viewer, _status, _visible_reserves

#: A SplendorGame: game.py imports this module to draw itself, so the class is not
#: imported here (the layers stay free of circles, even for type checking).
_Game = Any


__all__ = ["HEIGHT", "WIDTH", "render_rgb"]

WIDTH, HEIGHT = 960, 720


_GEM_RGB = ((238, 238, 238), (40, 95, 205), (30, 150, 75), (205, 45, 45), (45, 45, 45), (232, 185, 40))
_LEVEL_BACK = ((60, 140, 80), (205, 160, 40), (60, 95, 175))  # card backs, level 1..3
_BG, _INK, _PANEL, _CARD, _EDGE = (28, 46, 62), (20, 20, 20), (46, 66, 84), (250, 246, 234), (90, 90, 90)
_HIGHLIGHT, _LIGHT, _MUTED = (255, 210, 60), (235, 235, 235), (150, 165, 180)
_CARD_W, _CARD_H, _GAP = 96, 150, 8
_MARKET_X, _MARKET_Y = 16, 136
_PANEL_X, _PANEL_W = 548, 400


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's built-in scalable font (Pillow >= 10.1 with FreeType, as its wheels ship), no font files."""
    return ImageFont.load_default(size=size)


def render_rgb(game: _Game, viewer: int | None = None) -> np.ndarray:
    """The position drawn as a ``uint8[720, 960, 3]`` image, hidden cards face down for ``viewer``.

    >>> from tabletop_rl import SplendorGame
    >>> render_rgb(SplendorGame(seed=3), viewer=0).dtype
    dtype('uint8')
    """
    _check_viewer(game, viewer)
    img = Image.new("RGB", (WIDTH, HEIGHT), _BG)
    _draw_header(img, game, viewer)
    for i, nb in enumerate(game.table_nobles):
        _draw_noble(img, _MARKET_X + i * (_CARD_W + _GAP) + 8, 44, nb)
    for row, level in enumerate((3, 2, 1)):
        y = _MARKET_Y + row * (_CARD_H + _GAP)
        _draw_deck(img, _MARKET_X, y, level, game.deck_sizes[level - 1])
        for s, card in enumerate(game.market(level)):
            _draw_card(img, _MARKET_X + (s + 1) * (_CARD_W + _GAP), y, card, _CARD_W, _CARD_H)
    _draw_bank(img, game)
    panel_h = (HEIGHT - 44) // game.num_players - _GAP
    for p in range(game.num_players):
        _draw_player(img, game, p, viewer, 44 + p * (panel_h + _GAP), min(panel_h, 180))
    return np.array(img)  # a writable copy, not a read-only view of the image buffer


def _text(img: Image.Image, xy: tuple[int, int], text: str, size: int, fill, anchor: str = "la") -> None:
    mask, (dx, dy) = _glyphs(text, size, anchor)
    img.paste(fill, (xy[0] + dx, xy[1] + dy), mask)


@lru_cache(maxsize=4096)
def _glyphs(text: str, size: int, anchor: str) -> tuple[Image.Image, tuple[int, int]]:
    """``text`` rasterised once as a mask and its offset from the anchor point; glyph rendering is most
    of a frame's cost and the same short labels recur every frame."""
    left, top, right, bottom = (int(v) for v in _font(size).getbbox(text, anchor=anchor))
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)))
    ImageDraw.Draw(mask).text((-left, -top), text, fill=255, font=_font(size), anchor=anchor)
    return mask, (left, top)


def _ink_on(colour: int) -> tuple[int, int, int]:
    """Text colour readable on a gem of ``colour``: dark on white and gold, light on the rest."""
    return _INK if colour in (0, R.GOLD) else _LIGHT


def _gem(img: Image.Image, cx: int, cy: int, r: int, colour: int, count: int, size: int) -> None:
    ImageDraw.Draw(img).ellipse((cx - r, cy - r, cx + r, cy + r), fill=_GEM_RGB[colour], outline=_EDGE)
    _text(img, (cx, cy), str(count), size, _ink_on(colour), "mm")


def _pip(img: Image.Image, x: int, y: int, side: int, colour: int, count: int, size: int) -> None:
    """A square pip: a bonus (a card's colour) rather than a token."""
    ImageDraw.Draw(img).rounded_rectangle((x, y, x + side, y + side), 3, fill=_GEM_RGB[colour], outline=_EDGE)
    _text(img, (x + side // 2, y + side // 2), str(count), size, _ink_on(colour), "mm")


def _draw_header(img: Image.Image, game: _Game, viewer: int | None) -> None:
    view = "spectator" if viewer is None else f"P{viewer}'s view"
    final = "   FINAL ROUND" if game.state[R.FINAL_ROUND] else ""
    _text(img, (16, 10), f"Splendor   ply {game.ply}   {_status(game)}{final}", 20, _LIGHT)
    _text(img, (WIDTH - 16, 12), view, 16, _MUTED, "ra")


def _draw_noble(img: Image.Image, x: int, y: int, noble: int) -> None:
    _, nobles = R.tables()
    ImageDraw.Draw(img).rounded_rectangle((x, y, x + 80, y + 80), 6, fill=(222, 200, 170), outline=_EDGE, width=2)
    _text(img, (x + 6, y + 4), str(R.NOBLE_POINTS), 20, _INK)
    _text(img, (x + 74, y + 6), f"N{noble}", 13, _EDGE, "ra")
    need = [(c, int(n)) for c, n in enumerate(nobles[noble]) if n]
    for i, (c, n) in enumerate(need):
        _pip(img, x + 6 + i * 24, y + 54, 20, c, n, 14)


def _draw_back(img: Image.Image, x: int, y: int, w: int, h: int, level: int, label: str) -> None:
    draw = ImageDraw.Draw(img)
    draw.rounded_rectangle((x, y, x + w, y + h), 6, fill=_LEVEL_BACK[level - 1], outline=_LIGHT, width=2)
    draw.rounded_rectangle((x + 6, y + 6, x + w - 6, y + h - 6), 4, outline=(255, 255, 255), width=1)
    big = 28 if h > 100 else 18
    _text(img, (x + w // 2, y + h // 2 - big // 2), "I" * level, big, _LIGHT, "mm")
    _text(img, (x + w // 2, y + h // 2 + big // 2 + 4), label, 14 if h > 100 else 11, _LIGHT, "mm")


def _draw_deck(img: Image.Image, x: int, y: int, level: int, size: int) -> None:
    if size:
        _draw_back(img, x, y, _CARD_W, _CARD_H, level, f"{size} left")
    else:
        _draw_empty(img, x, y, _CARD_W, _CARD_H, f"L{level} deck empty")


def _draw_empty(img: Image.Image, x: int, y: int, w: int, h: int, label: str) -> None:
    ImageDraw.Draw(img).rounded_rectangle((x, y, x + w, y + h), 6, outline=_MUTED, width=1)
    _text(img, (x + w // 2, y + h // 2), label, 11, _MUTED, "mm")


def _draw_card(img: Image.Image, x: int, y: int, card: int | None, w: int, h: int) -> None:
    """A face-up card scaled to ``w x h``: bonus band with points, id, and cost pips coloured per gem."""
    if card is None:
        _draw_empty(img, x, y, w, h, "empty")
        return
    cards, _ = R.tables()
    bonus, points = int(cards[card, R.CARD_BONUS]), int(cards[card, R.CARD_POINTS])
    r = max(8, w // 10)  # pip radius; text and band scale with it so small reserve cards stay legible
    size, band = r + 5, 2 * r + 10
    draw = ImageDraw.Draw(img)
    draw.rounded_rectangle((x, y, x + w, y + h), 6, fill=_CARD, outline=_EDGE, width=2)
    draw.rounded_rectangle((x + 2, y + 2, x + w - 2, y + band), 5, fill=_GEM_RGB[bonus])
    if points:
        _text(img, (x + 6, y + band // 2 + 1), str(points), size + 6, _ink_on(bonus), "lm")
    _text(img, (x + w - 6, y + band // 2 + 1), f"#{card}", size, _ink_on(bonus), "rm")
    _text(img, (x + w - 6, y + h - 6), "I" * int(cards[card, R.CARD_LEVEL]), size, _EDGE, "rd")
    cost = [(c, int(n)) for c, n in enumerate(cards[card, R.CARD_COST:R.CARD_COST + 5]) if n]
    for i, (c, n) in enumerate(reversed(cost)):
        _gem(img, x + 6 + r, y + h - 6 - r - i * (2 * r + 2), r, c, n, size)


def _draw_bank(img: Image.Image, game: _Game) -> None:
    y = _MARKET_Y + 3 * (_CARD_H + _GAP) + 12
    _text(img, (_MARKET_X, y + 28), "Bank", 20, _LIGHT, "lm")
    for c, n in enumerate(game.bank.values()):
        _gem(img, _MARKET_X + 104 + c * 72, y + 28, 27, c, n, 22)


def _draw_player(img: Image.Image, game: _Game, p: int, viewer: int | None,
                 y: int, h: int) -> None:
    me = game.player(p)
    to_act = p == game.current_player and not game.is_over
    x, w = _PANEL_X, _PANEL_W
    ImageDraw.Draw(img).rounded_rectangle((x, y, x + w, y + h), 8, fill=_PANEL,
                           outline=_HIGHLIGHT if to_act else _MUTED, width=4 if to_act else 1)
    name = f"P{p}" + ("  (to act)" if to_act else "") + ("  (you)" if viewer == p else "")
    _text(img, (x + 12, y + 8), name, 18, _HIGHLIGHT if to_act else _LIGHT)
    _text(img, (x + w - 12, y + 6), f"{me['points']} pts", 22, _LIGHT, "ra")
    nobles = " ".join(f"N{nb}" for nb in me["nobles"]) or "none"
    tokens = sum(me["tokens"].values())
    _text(img, (x + 12, y + 30), f"cards: {len(me['bought'])}   tokens: {tokens}   nobles: {nobles}", 13, _MUTED)
    bonuses, held = list(me["bonuses"].values()), list(me["tokens"].values())
    for c in range(6):
        cx = x + 26 + c * 34
        if c < 5:
            _pip(img, cx - 13, y + 56, 26, c, bonuses[c], 15)
        _gem(img, cx, y + 104, 14, c, held[c], 15)
    for i, (level, card) in enumerate(_visible_reserves(game, p, viewer)):
        rx = x + 226 + i * 58
        if card is None:
            _draw_back(img, rx, y + 50, 54, 108, level, "hidden")
        else:
            _draw_card(img, rx, y + 50, card, 54, 108)
