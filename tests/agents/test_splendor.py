"""The shipped Splendor networks (``agents/splendor.py``): ``az:default`` and ``ppo:default`` load plain arrays
(``agents.ppo.export_arrays``) with numpy alone, play without torch, and give the same outputs and moves as the
models they were exported from (those comparisons need the [train] extra, which reads the originals)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from positions import random_game
from tabletop_rl.agents import make_policy
from tabletop_rl.agents.ppo import ARRAYS_FORMAT, export_arrays, network_state
from tabletop_rl.agents.search.splendor_puct import mlp_forward, net_from_state_dict
from tabletop_rl.agents.splendor import default_az_model_path, default_ppo_model_path
from tabletop_rl.games.splendor.game import SplendorGame

#: Python with torch, stable-baselines3 and sb3_contrib unimportable (``import torch`` raises ImportError), as in
#: the base install; then the shipped agents each play a move and a ``.pt`` is refused in one line.
_WITHOUT_TORCH = """
import sys
for name in ("torch", "sb3_contrib", "stable_baselines3"):
    sys.modules[name] = None
from tabletop_rl.agents import make_policy
from tabletop_rl.games.splendor.game import SplendorGame
g = SplendorGame(2, seed=3)
for spec in ("az:default", "ppo:default"):
    policy = make_policy(spec, game="splendor", seed=0)
    move = policy.act(g.observe(0), g.legal_mask(), g.policy_info(0))
    print(spec, "plays a legal move:", bool(g.legal_mask()[move]))
try:
    make_policy("az:" + sys.argv[1], game="splendor")
except ValueError as e:
    print("pt:", e)
print("torch stayed unimported:", sys.modules["torch"] is None)
"""


def _positions(count: int) -> list[SplendorGame]:
    return [g for g in (random_game(2, seed, plies=3 + 4 * seed) for seed in range(count)) if not g.is_over]


def _act(policy, g: SplendorGame) -> int:
    seat = g.current_player
    return policy.act(g.observe(seat), g.legal_mask(), {"game": g, "player": seat})


def test_the_shipped_agents_play_without_torch(tmp_path):
    result = subprocess.run([sys.executable, "-c", _WITHOUT_TORCH, str(default_az_model_path())],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "az:default plays a legal move: True" in lines and "ppo:default plays a legal move: True" in lines
    assert "torch stayed unimported: True" in lines
    refusal = [line for line in lines if line.startswith("pt:")]
    assert len(refusal) == 1 and "[train]" in refusal[0] and "pip install" in refusal[0], result.stdout


def test_the_shipped_arrays_are_plain_float_arrays_with_their_metadata():
    for source in (default_az_model_path(), default_ppo_model_path()):
        with np.load(source.with_suffix(".npz"), allow_pickle=False) as z:
            assert str(z["format"]) == ARRAYS_FORMAT
            meta = json.loads(str(z["meta"]))
            assert all(z[k].dtype == np.float32 for k in z.files if k not in ("format", "meta"))
        assert meta["game"] == "splendor" and meta["num_players"] == 2 and meta["observation_size"] == 312


def test_an_array_file_holding_objects_is_refused_in_one_line(tmp_path):
    path = tmp_path / "net.npz"
    np.savez(path, format=np.array(ARRAYS_FORMAT), meta=np.array("{}"), **{"pi.0.weight": np.array([None])})
    with pytest.raises(ValueError, match="not a readable array file") as e:
        make_policy(f"az:{path}", game="splendor")
    assert "\n" not in str(e.value)
    with zipfile.ZipFile(path, "w") as z:  # a zip of .npy members, none of them numpy's
        z.writestr("format.npy", b"not an array")
    with pytest.raises(ValueError, match="not a readable array file"):
        make_policy(f"ppo:{path}", game="splendor")


def test_az_default_gives_the_outputs_and_moves_of_the_checkpoint_it_was_exported_from(tmp_path):
    pytest.importorskip("torch", reason="reading the .pt needs the [train] extra")
    pt_meta, pt_state = network_state(default_az_model_path())
    npz_meta, npz_state = network_state(default_az_model_path().with_suffix(".npz"))
    assert npz_meta == pt_meta and sorted(npz_state) == sorted(pt_state)
    pt_net, npz_net = net_from_state_dict(pt_state), net_from_state_dict(npz_state)
    for g in _positions(6):
        obs = g.observe(g.current_player).astype(np.float32)
        for weights, biases in ((0, 1), (2, 3)):
            np.testing.assert_allclose(mlp_forward(obs, npz_net[weights], npz_net[biases]),
                                       mlp_forward(obs, pt_net[weights], pt_net[biases]), rtol=1e-5, atol=1e-6)
        for seed in range(2):
            from_arrays = make_policy("az:default,simulations=200", game="splendor", seed=seed)
            from_pt = make_policy(f"az:{default_az_model_path()},simulations=200", game="splendor", seed=seed)
            assert _act(from_arrays, g) == _act(from_pt, g)
            np.testing.assert_array_equal(from_arrays.root_visits(), from_pt.root_visits())
    # a newly trained network is exported the same way: the shipped file is what export_arrays writes
    _, again = network_state(export_arrays(default_az_model_path(), tmp_path / "again.npz"))
    for key, value in npz_state.items():
        np.testing.assert_array_equal(again[key], value)


def test_ppo_default_plays_the_moves_of_the_model_zip_it_was_exported_from(tmp_path):
    pytest.importorskip("sb3_contrib", reason="reading the MaskablePPO zip needs the [train] extra")
    from_arrays = make_policy("ppo:default", game="splendor", seed=0)
    from_zip = make_policy(f"ppo:{default_ppo_model_path()}", game="splendor", seed=0)
    assert from_arrays.meta == from_zip.meta
    games = _positions(12)
    observations = np.stack([g.observe(g.current_player) for g in games])
    masks = np.stack([g.legal_mask() for g in games])
    np.testing.assert_array_equal(from_arrays.act_batch(observations, masks), from_zip.act_batch(observations, masks))
    _, again = network_state(export_arrays(default_ppo_model_path(), tmp_path / "again.npz"))
    _, shipped = network_state(default_ppo_model_path().with_suffix(".npz"))
    for key, value in shipped.items():
        np.testing.assert_array_equal(again[key], value)
