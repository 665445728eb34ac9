"""Our envs in PettingZoo's registry (PettingZoo 1.27+): every id makes its env, registering again changes
nothing and warns of nothing."""

from __future__ import annotations

import warnings

import pettingzoo
import pytest
from pettingzoo import AECEnv, ParallelEnv

import tabletop_rl  # noqa: F401  registers the envs
from tabletop_rl.envs.pettingzoo_registry import pettingzoo_ids, register_pettingzoo_envs

pytestmark = pytest.mark.skipif(not hasattr(pettingzoo, "register"), reason="this PettingZoo has no registry")


@pytest.mark.parametrize("env_type, env_id", sorted(pettingzoo_ids()))
def test_every_id_makes_its_env(env_type, env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the registry warns when an env is not of the type asked for
        env = pettingzoo.make(env_type, env_id)
    assert isinstance(env, AECEnv if env_type == "aec" else ParallelEnv)
    env.reset(seed=1)
    assert env.agents


def test_keyword_arguments_reach_the_env():
    assert pettingzoo.make("aec", "tabletop_rl/Splendor-v0", num_players=4).possible_agents[-1] == "player_3"


def test_registering_twice_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register_pettingzoo_envs()
