"""Splendor: rules core, Python game object, environments and policies."""

from .actions import ACTION_NAMES, NUM_ACTIONS, action_id, action_name
from .env import raw_env, splendor_env
from .game import IllegalActionError, SplendorGame
from .gym_env import SplendorGymEnv
from .observe import OBSERVATION_VERSION, observation_layout, observe
from .vector import SplendorVectorEnv

__all__ = [
    "ACTION_NAMES", "NUM_ACTIONS", "OBSERVATION_VERSION", "IllegalActionError", "SplendorGame", "SplendorGymEnv",
    "SplendorVectorEnv", "action_id", "action_name", "observation_layout", "observe", "raw_env", "splendor_env",
]
