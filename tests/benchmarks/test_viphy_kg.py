"""ViPhy: the size knowledge graph, the scene-evidence scorer, the probe recipes and
``rcrn viphy``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from benchmarks.viphy.data import ViPhyItem
from benchmarks.viphy.extract import (
    Scene,
    SceneObject,
    pairwise_relation,
    polygon_centroid,
    read_scenes,
)
from benchmarks.viphy.kg import SizeGraph
from benchmarks.viphy.probe import RECIPES, FrequencyPrior, HashEncoder, LinearProbe
from benchmarks.viphy.scene_scorer import SceneEvidenceScorer, read_scene_dir, scene_key
from rcrn.cli import main


def size(o1: str, o2: str, gold: str = "bigger", task: str = "size") -> ViPhyItem:
    return ViPhyItem(index=0, task=task, split="train", o1=o1, o2=o2, gold=(gold,),
                     id=f"{o1}/{o2}")


def spatial(o1: str, o2: str, scene: str = "kitchen", gold: tuple[str, ...] = ("above",)
            ) -> ViPhyItem:
    return ViPhyItem(index=0, task="spatial", split="test", o1=o1, o2=o2, gold=gold,
                     scene=scene, id=f"{o1}/{o2}")


def box(name: str, y1: float, y2: float, depth: float = 1.0) -> SceneObject:
    return SceneObject(name=name, box=(0.0, y1, 10.0, y2), depth=depth)


def _fixtures():
    spec = importlib.util.spec_from_file_location("viphy_fixtures_kg",
                                                  Path(__file__).with_name("test_viphy.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------ knowledge graph
def test_kg_infers_a_chain_transitively() -> None:
    train = [size("truck", "dog"), size("mouse", "dog", "smaller"), size("ant", "mouse", "smaller")]
    graph = SizeGraph().fit(train)
    assert graph.nodes == ["ant", "dog", "mouse", "truck"]
    assert graph.path("truck", "ant") == ["truck", "dog", "mouse", "ant"]
    assert graph.path_stats("truck", "ant") == (3, 1) and graph.path_stats("ant", "truck") is None
    # a > b, b > c => a > c, and the inverse pair the other way
    p = graph.score(size("truck", "mouse", task="size_trans"))
    q = graph.score(size("mouse", "truck", task="size_trans"))
    assert p.sum() == pytest.approx(1.0) and p[0] > 0.5 and q[1] > 0.5
    # with a symmetric (uniform) fallback the two orders mirror each other exactly
    bare = SizeGraph()
    for big, small in (("truck", "dog"), ("dog", "mouse"), ("mouse", "ant")):
        bare.add(big, small)
    fwd, back = bare.score(size("truck", "mouse")), bare.score(size("mouse", "truck"))
    assert fwd[0] == pytest.approx(back[1]) == pytest.approx((0.5 + 0.25) / 1.0)
    assert graph.level(size("truck", "mouse")) == "path"
    assert graph.level(size("dog", "truck")) == "direct"
    # a direct edge is stronger evidence than a two-step path, which beats three steps
    direct = bare.score(size("truck", "dog"))[0]
    two = bare.score(size("truck", "mouse"))[0]
    three = bare.score(size("truck", "ant"))[0]
    assert direct > two > three > 0.5


def test_kg_unknown_and_contradicting_pairs_fall_back() -> None:
    train = [size("cat", "mouse"), size("car", "cup"), size("sofa", "cup"),
             size("cup", "sofa")]
    graph = SizeGraph().fit(train)
    prior = FrequencyPrior("size").fit(train)
    owl = size("owl", "moon")
    assert graph.level(owl) == "fallback"
    assert np.allclose(graph.score(owl), prior.score(owl))
    # no path either way between two known objects: the prior too
    assert graph.level(size("cat", "car")) == "fallback"
    assert np.allclose(graph.score(size("cat", "car")), prior.score(size("cat", "car")))
    # paths both ways balance out towards the fallback
    both = graph.score(size("sofa", "cup"))
    assert abs(both[0] - 0.5) < abs(graph.score(size("car", "cup"))[0] - 0.5)
    # head-noun back-off (size_sub): "tabby cat" reads as "cat"
    assert graph.score(size("tabby cat", "field mouse", task="size_sub"))[0] > 0.5
    assert SizeGraph(head_backoff=False).fit(train).level(size("tabby cat", "mouse")) \
        == "fallback"
    # without a fitted fallback: uniform
    bare = SizeGraph(fallback=None)
    bare.add("a", "b")
    assert bare.score(size("x", "y")).tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="scores size"):
        graph.score(spatial("a", "b"))
    with pytest.raises(ValueError, match="decay"):
        SizeGraph(decay=0)


def test_kg_max_depth_limits_paths() -> None:
    graph = SizeGraph(max_depth=2).fit([size("a", "b"), size("b", "c"), size("c", "d")])
    assert graph.level(size("a", "c")) == "path" and graph.level(size("a", "d")) == "fallback"


# ------------------------------------------------------------------ scene evidence
def kitchen() -> Scene:
    return Scene("kitchen", [box("lamp", 0, 10), box("table", 40, 80), box("chair", 30, 90),
                             box("rug", 85, 95)])


def test_pairwise_cases_above_below_similar_level() -> None:
    lamp, table, chair, rug = kitchen().objects
    assert pairwise_relation(lamp, table) == ">"   # lowest 10 above centroid 60
    assert pairwise_relation(table, lamp) == "<"
    assert pairwise_relation(chair, table) == "="  # 90 vs 60 and 80 vs 60
    assert pairwise_relation(rug, chair) == "="  # rug lowest 95 > chair centroid 60
    assert pairwise_relation(table, rug) == ">"


def test_scene_scorer_spatial_levels_and_typical() -> None:
    living = Scene("Living Room", [box("lamp", 0, 10), box("table", 40, 80)])
    scorer = SceneEvidenceScorer("spatial").fit([kitchen(), kitchen(), living])
    item = spatial("lamp", "table")
    assert scorer.level(item) == "scene"
    assert scorer.counts(item)[1].tolist() == [2.0, 0.0, 0.0]
    probs = scorer.score(item)
    assert probs.sum() == pytest.approx(1.0) and probs.argmax() == 0
    assert probs.tolist() == pytest.approx([(2 + 1 / 3) / 3, (1 / 3) / 3, (1 / 3) / 3])
    assert scorer.typical(item) == ("above",)
    assert scorer.typical(spatial("table", "lamp")) == ("below",)
    assert scorer.typical(spatial("chair", "table")) == ("same level",)
    # scene types compare case- and space-insensitively
    assert scene_key("Living Room") == "living_room"
    assert scorer.level(spatial("lamp", "table", "living_room")) == "scene"
    # a pair seen only in another scene type: pooled; an unseen pair: the fallback
    assert scorer.level(spatial("chair", "table", "bedroom")) == "pooled"
    assert scorer.level(spatial("owl", "moon")) == "fallback"
    assert scorer.score(spatial("owl", "moon")).tolist() == pytest.approx([1 / 3] * 3)
    assert scorer.typical(spatial("owl", "moon")) == ()

    class Fixed:
        def score(self, item: ViPhyItem) -> np.ndarray:
            return np.asarray([0.0, 0.0, 1.0])

    fb = SceneEvidenceScorer("spatial", fallback=Fixed(), alpha=1.0).fit([kitchen()])
    assert fb.score(spatial("owl", "moon")).tolist() == [0.0, 0.0, 1.0]
    assert fb.score(item).tolist() == pytest.approx([0.5, 0.0, 0.5])
    with pytest.raises(ValueError, match="no colour"):
        SceneEvidenceScorer("color")


def test_scene_scorer_partitions_and_transitivity() -> None:
    # depths 0 / 5 / 10 -> windows [0, 5], [2.5, 7.5], [5, 10]: shelf and floor share no
    # window, and are related through the cup that sits in both overlaps
    scene = Scene("kitchen", [box("shelf", 0, 20, depth=0.0), box("cup", 30, 50, depth=5.0),
                              box("floor", 45, 200, depth=10.0)])
    scorer = SceneEvidenceScorer("spatial").fit([scene])
    assert scorer.typical(spatial("shelf", "cup")) == ("above",)
    assert scorer.typical(spatial("cup", "floor")) == ("above",)
    assert scorer.typical(spatial("shelf", "floor")) == ("above",)  # transitive
    assert scorer.typical(spatial("floor", "shelf")) == ("below",)
    # without overlap the partitions are disjoint: no transitive link, no direct one
    disjoint = SceneEvidenceScorer("spatial", overlap=0.0).fit([scene])
    assert disjoint.level(spatial("shelf", "floor")) == "fallback"
    # a far object at a similar image height is not compared with a near one directly
    far = Scene("kitchen", [box("shelf", 0, 20, depth=0.0), box("cup", 30, 50, depth=5.0),
                            box("bird", 0, 20, depth=10.0)])
    far_scorer = SceneEvidenceScorer("spatial").fit([far])
    assert far_scorer.typical(spatial("shelf", "cup")) == ("above",)
    assert far_scorer.typical(spatial("bird", "cup")) == ("above",)
    assert far_scorer.level(spatial("shelf", "bird")) == "fallback"  # no path decides it


def test_polygons_use_lowest_point_and_centroid(tmp_path: Path) -> None:
    triangle = [[0, 0], [100, 0], [50, 90]]  # points down: centroid y 30, box centre 45
    assert polygon_centroid([tuple(p) for p in triangle])[1] == pytest.approx(30.0)
    poly = SceneObject.from_polygon("shade", triangle, 1.0)
    assert poly.box == (0.0, 0.0, 100.0, 90.0) and poly.lowest_y == 90.0
    cup = box("cup", 35, 40)
    assert pairwise_relation(cup, poly) == "="  # cup's lowest 40 is under the centroid 30
    assert pairwise_relation(cup, SceneObject("shade", poly.box, 1.0)) == ">"  # box centre 45
    folder = tmp_path / "scenes" / "a"
    folder.mkdir(parents=True)
    (folder / "one.json").write_text(json.dumps([{"scene_type": "kitchen", "objects": [
        {"name": "shade", "polygon": triangle, "depth": 1},
        {"name": "cup", "box": [0, 35, 10, 40], "depth": 1},
        {"name": "hook", "polygon": [[0, 0], [4, 0], [2, 6]], "depth": 1}]}]),
        encoding="utf-8")
    (tmp_path / "scenes" / "two.json").write_text(json.dumps([{"scene_type": "kitchen",
        "objects": [{"name": "cup", "box": [0, 35, 10, 40], "depth": 1},
                    {"name": "shade", "box": [0, 0, 100, 90], "depth": 1}]}]),
        encoding="utf-8")
    scenes = read_scene_dir(tmp_path / "scenes")
    assert len(scenes) == 2 and scenes[0].objects[0].polygon is not None
    scorer = SceneEvidenceScorer.from_dir(tmp_path / "scenes", "spatial")
    assert scorer.counts(spatial("cup", "shade"))[1].tolist() == [1.0, 0.0, 1.0]
    assert scorer.typical(spatial("hook", "cup")) == ("above",)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"scene_type": "k", "objects": [
        {"name": "a", "polygon": [[0, 0], [1, 1]], "depth": 1}]}]), encoding="utf-8")
    with pytest.raises(Exception, match="at least 3"):
        read_scenes(bad)


def test_scene_scorer_size_from_jenks_clusters() -> None:
    names = ["coin", "cup", "chair", "car", "house", "tower"]
    objs = [SceneObject(n, (0.0, 0.0, float(10 ** i), 1.0), 1.0) for i, n in enumerate(names)]
    scorer = SceneEvidenceScorer("size").fit([Scene("street", objs), Scene("street", objs)])
    p = scorer.score(size("tower", "coin"))
    assert scorer.level(size("tower", "coin")) == "scene" and p[0] > 0.5
    assert scorer.score(size("coin", "tower", task="size_trans"))[1] > 0.5
    assert scorer.level(size("coin", "moon")) == "fallback"


# ------------------------------------------------------------------ probe recipes
def test_paper_recipe_and_saved_state(tmp_path: Path) -> None:
    assert RECIPES["paper"] == {"epochs": 50, "batch_size": 8, "lr": 1e-4,
                                "single_label": True}
    train = [spatial(a, "table", gold=("above", "same level")) for a in ("lamp", "fan")]
    train += [spatial(b, "table", gold=("below",)) for b in ("rug", "mat")]
    probe = LinearProbe.from_recipe(HashEncoder(dim=32), "spatial", "paper", epochs=2)
    assert probe.batch_size == 8 and probe.lr == 1e-4 and probe.single_label
    probe.fit(train)
    path = tmp_path / "probe.pt"
    torch.save(probe.state(), path)
    back = LinearProbe.from_state(HashEncoder(dim=32),
                                  torch.load(path, weights_only=True))
    assert np.allclose(back.score_many(train), probe.score_many(train))
    with pytest.raises(ValueError, match="features per item"):
        LinearProbe.from_state(HashEncoder(dim=16), probe.state()).score(train[0])
    with pytest.raises(ValueError, match="unknown recipe"):
        LinearProbe.from_recipe(HashEncoder(dim=8), "size", "slow")


# ------------------------------------------------------------------ CLI
def test_cli_evaluate_and_train(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _fixtures().make_release(tmp_path / "dataset")
    base = ["viphy", "evaluate", "--root", str(root)]
    assert main([*base, "--task", "spatial", "--scorer", "prior", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    m = report["metrics"]
    assert report["count"] == 4 and set(report["per_scene"]) == {"kitchen", "living_room"}
    for part in (m, *report["per_scene"].values(), *m["subsets"].values()):
        assert all(0.0 <= part[k] <= 1.0 for k in ("r_acc", "confidence", "f1"))
    assert report["per_scene"]["kitchen"]["count"] == 2
    # text output: the split, a line per scene type, the inverse-pair line
    assert main([*base, "--task", "spatial", "--scorer", "prior"]) == 0
    out = capsys.readouterr().out
    assert "scene kitchen" in out and "scene living_room" in out
    assert "inverse pair in train: 2 rows" in out and "R-Acc" in out and "Conf" in out
    # kg on the transitive test set: (cup, car) is the inverse of the edge car > cup
    assert main([*base, "--task", "size_trans", "--scorer", "kg", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["levels"] == {"direct": 1, "fallback": 1}
    assert 0.0 <= report["metrics"]["r_acc"] <= 1.0
    # scenes
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    (scenes / "k.json").write_text(json.dumps([{"scene_type": "kitchen", "objects": [
        {"name": "mug", "box": [0, 0, 10, 10], "depth": 1},
        {"name": "table", "box": [0, 40, 50, 80], "depth": 1}]}]), encoding="utf-8")
    assert main([*base, "--task", "spatial", "--scorer", "scenes", "--scenes", str(scenes),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["levels"]["scene"] == 1 and report["scene_images"] == 1
    assert all(0.0 <= report["metrics"][k] <= 1.0 for k in ("r_acc", "confidence", "f1"))
    # train, save, evaluate with the saved weights
    weights = tmp_path / "runs" / "size.pt"
    assert main(["viphy", "train", "--root", str(root), "--task", "size", "--dim", "64",
                 "--epochs", "2", "--recipe", "paper", "--out", str(weights), "--json"]) == 0
    trained = json.loads(capsys.readouterr().out)
    assert trained["batch_size"] == 8 and trained["lr"] == 1e-4 and weights.is_file()
    assert isinstance(torch.load(weights, weights_only=True), dict)
    assert main([*base, "--task", "size", "--scorer", "probe", "--weights", str(weights),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["weights"] == str(weights) and report["metrics"]["count"] == 2
    # errors
    assert main([*base, "--task", "spatial", "--scorer", "kg"]) == 2
    assert "size tasks" in capsys.readouterr().err
    assert main([*base, "--task", "spatial", "--scorer", "scenes"]) == 2
    assert "--scenes" in capsys.readouterr().err
    assert main([*base, "--task", "spatial", "--scorer", "probe", "--weights",
                 str(weights)]) == 2
    assert "cannot score" in capsys.readouterr().err


def test_rcrn_evaluate_routes_viphy_to_its_report(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    root = _fixtures().make_release(tmp_path / "dataset")
    assert main(["viphy", "evaluate", "--root", str(root), "--task", "size_trans",
                 "--scorer", "kg", "--json"]) == 0
    direct = json.loads(capsys.readouterr().out)
    assert main(["evaluate", "--benchmark", "viphy", "--root", str(root), "--task",
                 "size_trans", "--scorer", "kg", "--json"]) == 0
    routed = json.loads(capsys.readouterr().out)
    assert routed["metrics"] == direct["metrics"] and routed["levels"] == direct["levels"]
    # rcrn train --benchmark viphy trains the probe (paper recipe); --checkpoint takes it
    assert main(["train", "--benchmark", "viphy", "--root", str(root), "--task", "size",
                 "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    weights = tmp_path / "run" / "size-probe.pt"
    assert weights.is_file()
    assert main(["evaluate", "--benchmark", "viphy", "--root", str(root), "--task", "size",
                 "--checkpoint", str(weights), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["weights"] == str(weights)
    assert main(["evaluate", "--benchmark", "viphy", "--task", "size"]) == 2
    assert "--root" in capsys.readouterr().err
    assert main(["evaluate", "--benchmark", "synthetic"]) == 2
    assert "--checkpoint is required" in capsys.readouterr().err
