"""Splendor: rules core, Python game object, environments and policies."""

from .actions import ACTION_NAMES, NUM_ACTIONS, action_id, action_name
from .game import IllegalActionError, SplendorGame

__all__ = ["ACTION_NAMES", "NUM_ACTIONS", "IllegalActionError", "SplendorGame", "action_id", "action_name"]
