"""Klaverjas: the rules core (``rules``), the PettingZoo AEC env, baselines, the best-card service and model.

>>> from tabletop_rl.klaverjas import klaverjas_env
>>> klaverjas_env().metadata["name"]
'klaverjas_v0'
"""

from .env import klaverjas_env, raw_env

__all__ = ["klaverjas_env", "raw_env"]
