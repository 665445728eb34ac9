"""The environments, every one over the game contract (``core.game``): ``TabletopAEC``, the PettingZoo AEC env
of the turn-based games, with ``splendor_env`` and ``klaverjas_env`` in PettingZoo's classic wrappers
(``aec``); ``TabletopGymEnv``, one seat against opponent policies, as ``SplendorGymEnv`` and
``KlaverjasGymEnv`` (``gym``); Splendor's batched ``SplendorVectorEnv`` (``splendor_vector``, with its
stable-baselines3 adapter in ``sb3``); and Space Conquest's ``ParallelEnv`` (``space_conquest_parallel``,
loaded on first use: ``tabletop_rl.space_conquest_env``). ``episode`` holds the checks, reward modes and
seeding they share.
"""

from tabletop_rl.envs.aec import TabletopAEC, klaverjas_env, splendor_env
from tabletop_rl.envs.gym import KlaverjasGymEnv, SplendorGymEnv, TabletopGymEnv
from tabletop_rl.envs.splendor_vector import SplendorVectorEnv

__all__ = ["KlaverjasGymEnv", "SplendorGymEnv", "SplendorVectorEnv", "TabletopAEC", "TabletopGymEnv",
           "klaverjas_env", "splendor_env"]
