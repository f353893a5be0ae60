"""ViPhy extraction pipeline: spatial rules, depth partitions, Jenks, CSV round trips."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

from benchmarks.base import DataError
from benchmarks.viphy import read_items
from benchmarks.viphy.extract import (
    Scene,
    SceneObject,
    aggregate_size,
    aggregate_spatial,
    depth_partitions,
    jenks_breaks,
    jenks_labels,
    pairwise_relation,
    read_scenes,
    scene_relations,
    scene_size_clusters,
    write_size_csv,
    write_spatial_csv,
)


def obj(name: str, y1: float, y2: float, depth: float = 1.0, width: float = 10.0) -> SceneObject:
    return SceneObject(name=name, box=(0.0, y1, width, y2), depth=depth)


def kitchen(mug_table_level: bool = False) -> Scene:
    """lamp (top) / mug / plate / table (bottom), all at one depth."""
    mug = obj("mug", 55, 75) if mug_table_level else obj("mug", 40, 60)
    return Scene("kitchen", [obj("lamp", 0, 20), mug, obj("plate", 45, 65),
                             obj("table", 50, 90)])


# ------------------------------------------------------------------ spatial rules
def test_pairwise_relation_paper_rule() -> None:
    lamp, mug, plate, table = kitchen().objects
    assert pairwise_relation(lamp, mug) == ">"      # lamp's bottom 20 above mug's centre 50
    assert pairwise_relation(mug, lamp) == "<"
    assert pairwise_relation(mug, table) == ">"     # 60 above 70
    assert pairwise_relation(mug, plate) == "="     # 60 vs 55 and 65 vs 50: neither
    assert pairwise_relation(plate, table) == ">"   # 65 above 70


def test_release_rule_differs() -> None:
    upper, lower = obj("shelf", 0, 60), obj("cup", 20, 40)   # centres 30 and 30
    assert pairwise_relation(upper, lower) == "="
    tall, low = obj("curtain", 0, 100), obj("rug", 60, 100)  # centres 50, 80
    assert pairwise_relation(tall, low) == "="               # 100 is not above 80
    assert pairwise_relation(tall, low, rule="release") == ">"  # rug's top 60 under 50
    with pytest.raises(ValueError, match="unknown rule"):
        pairwise_relation(tall, low, rule="other")


def test_depth_partitions_overlap() -> None:
    parts = depth_partitions([0.0, 0.25, 0.5, 0.75, 1.0])
    assert parts == [{0, 1, 2}, {1, 2, 3}, {2, 3, 4}]   # [0,.5], [.25,.75], [.5,1]
    assert depth_partitions([2.0, 4.0], overlap=0.0) == [{0}, set(), {1}]
    assert depth_partitions([3.0, 3.0]) == [{0, 1}] * 3
    assert depth_partitions([1.0], depth_range=(0.0, 8.0)) == [{0}, set(), set()]


def test_transitive_relations_across_partitions() -> None:
    # a (near) above m1 above m2 above b (far); only neighbours share a partition
    scene = Scene("office", [obj("a", 0, 10, 0.0), obj("m1", 20, 30, 0.4),
                             obj("m2", 40, 50, 0.6), obj("b", 60, 70, 1.0)])
    rel = scene_relations(scene)
    assert rel[(0, 1)] == rel[(1, 2)] == rel[(2, 3)] == ">"   # direct
    assert rel[(0, 2)] == rel[(1, 3)] == ">"                  # one step
    assert rel[(0, 3)] == ">" and rel[(3, 0)] == "<"          # two steps
    assert len(rel) == 12


def test_partitions_block_direct_comparison() -> None:
    # a and b would be "similar level" side by side, but lie in different partitions and
    # their paths disagree (a above m2, m2 below b), so they stay unrelated
    scene = Scene("office", [obj("a", 0, 30, 0.0), obj("m1", 20, 50, 0.4),
                             obj("m2", 40, 70, 0.6), obj("b", 10, 40, 1.0)])
    rel = scene_relations(scene)
    assert rel[(0, 1)] == ">" and rel[(1, 2)] == ">" and rel[(2, 3)] == "<"
    assert rel[(0, 2)] == ">"
    assert (0, 3) not in rel and (3, 0) not in rel
    assert scene_relations(scene, partitions=1)[(0, 3)] == "="


def test_aggregate_spatial_counts_images(tmp_path: Path) -> None:
    twin = kitchen()
    twin.objects.append(obj("lamp", 5, 15))  # a second lamp: the image still counts once
    scenes = [kitchen(), twin, kitchen(mug_table_level=True)]
    rows = {(r.o1, r.o2, r.scene): r for r in aggregate_spatial(scenes)}
    lamp_mug = rows[("lamp", "mug", "kitchen")]
    assert (lamp_mug.above, lamp_mug.same, lamp_mug.below) == (3, 0, 0)
    assert lamp_mug.typical == ">"
    mug_table = rows[("mug", "table", "kitchen")]
    assert (mug_table.above, mug_table.same, mug_table.below) == (2, 1, 0)
    assert mug_table.typical == ">,="          # 2/3, 1/3 -> both survive 0.2 then 0.3
    mirror = rows[("table", "mug", "kitchen")]
    assert (mirror.above, mirror.same, mirror.below) == (0, 1, 2)
    assert ("lamp", "lamp", "kitchen") not in rows
    assert all(r.freq >= 3 for r in aggregate_spatial(scenes, min_freq=3))


@pytest.mark.parametrize("index", [True, False])
def test_spatial_csv_round_trip(tmp_path: Path, index: bool) -> None:
    rows = aggregate_spatial([kitchen(), kitchen(), kitchen(mug_table_level=True)])
    path = write_spatial_csv(rows, tmp_path / "spatial" / "train.csv", index=index)
    head = path.read_text(encoding="utf-8").splitlines()[0]
    assert head == (",o1,o2,>,=,<,scene,freq,typical" if index
                    else "o1,o2,>,=,<,scene,freq,typical")
    items = read_items(path, "spatial", "train")
    assert len(items) == len(rows)
    for it, r in zip(items, rows):
        assert (it.o1, it.o2, it.scene, it.freq) == (r.o1, r.o2, r.scene, r.freq)
        assert it.counts == {"above": r.above, "below": r.below, "same level": r.same}
        signs = {"above": ">", "below": "<", "same level": "="}
        assert {signs[g] for g in it.gold} == set(r.typical.split(","))


# ------------------------------------------------------------------ Jenks
def test_jenks_known_example() -> None:
    values = [1, 2, 3, 10, 11, 12, 20, 21, 22]
    assert jenks_breaks(values, 3) == [1.0, 3.0, 12.0, 22.0]
    assert jenks_labels(values, 3) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert jenks_labels([22, 1, 11], 3) == [2, 0, 1]   # labels follow the input order
    assert jenks_breaks([5.0, 5.0, 5.0], 1) == [5.0, 5.0]
    with pytest.raises(ValueError, match="cannot form"):
        jenks_breaks([1, 2], 3)


def _ssd(groups: list[list[float]]) -> float:
    return sum(float(((np.asarray(g) - np.mean(g)) ** 2).sum()) for g in groups)


def test_jenks_is_optimal_against_brute_force() -> None:
    rng = random.Random(7)
    for _ in range(25):
        n, k = rng.randint(3, 9), rng.randint(2, 4)
        if k > n:
            continue
        values = sorted(rng.uniform(0, 100) for _ in range(n))
        best = min(_ssd([values[a:b] for a, b in zip((0, *cuts), (*cuts, n))])
                   for cuts in itertools.combinations(range(1, n), k - 1))
        labels = jenks_labels(values, k)
        groups = [[v for v, lab in zip(values, labels) if lab == c] for c in range(k)]
        assert all(groups) and _ssd(groups) == pytest.approx(best, rel=1e-9, abs=1e-9)


# ------------------------------------------------------------------ size
def size_scene(cup: float = 100.0, chair: float = 1000.0) -> Scene:
    """Six objects whose area x depth values are 1, 2, cup, chair, 1e4, 1e5."""
    values = {"bead": 1.0, "ring": 2.0, "cup": cup, "chair": chair, "car": 1e4,
              "house": 1e5}
    return Scene("street", [SceneObject(n, (0.0, 0.0, v / 2.0, 1.0), 2.0)
                            for n, v in values.items()])


def test_size_clusters_use_area_times_depth() -> None:
    assert scene_size_clusters(size_scene()) == [0, 0, 1, 2, 3, 4]
    small = Scene("street", size_scene().objects[:5])
    assert scene_size_clusters(small) == [0] * 5     # at most k objects: no clusters


def test_aggregate_size_majority_and_both_orders(tmp_path: Path) -> None:
    scenes = [size_scene(), size_scene(), size_scene(cup=1000.0, chair=100.0)]
    rows = {(r.o1, r.o2): r for r in aggregate_size(scenes)}
    assert (rows[("cup", "bead")].bigger, rows[("cup", "bead")].smaller) == (3, 0)
    assert rows[("cup", "bead")].typical == ">" and rows[("bead", "cup")].typical == "<"
    assert ("bead", "ring") not in rows                  # same cluster: no vote
    assert ("chair", "cup") not in rows                  # 2 of 3 votes < 0.7: dropped
    kept = aggregate_size(scenes, majority=0.6)
    assert any((r.o1, r.o2, r.typical) == ("chair", "cup", ">") for r in kept)
    for index in (True, False):
        path = write_size_csv(rows.values(), tmp_path / f"size{index}.csv", index=index)
        items = read_items(path, "size")
        assert {(i.o1, i.o2, i.gold[0]) for i in items} == {
            (r.o1, r.o2, "bigger" if r.typical == ">" else "smaller") for r in rows.values()}


# ------------------------------------------------------------------ input
def test_read_scenes(tmp_path: Path) -> None:
    path = tmp_path / "scenes.json"
    path.write_text(json.dumps([{"scene_type": "kitchen", "id": "img-1", "objects": [
        {"name": "mug", "box": [0, 40, 10, 60], "depth": 1.5},
        {"name": "table  top", "box": [0, 50, 50, 90], "depth": 2}]}]), encoding="utf-8")
    scenes = read_scenes(path)
    assert scenes[0].id == "img-1" and scenes[0].objects[1].name == "table top"
    assert scenes[0].objects[0].centroid_y == 50 and scenes[0].objects[0].area == 200


@pytest.mark.parametrize("data,message", [
    ([{"objects": []}], "record 0: field 'scene_type'"),
    ([{"scene_type": "kitchen", "objects": [{"name": "mug", "box": [0, 0, 1, 1]}]}],
     "record 0 object 0: field 'depth' must be a finite number"),
    ([{"scene_type": "k", "objects": []},
      {"scene_type": "k", "objects": [{"name": "a", "box": [5, 5, 1, 1], "depth": 1}]}],
     "record 1 object 0: box [5, 5, 1, 1] is not x1 <= x2"),
    ({"scene_type": "k"}, "expected a JSON list of scenes"),
])
def test_read_scenes_errors(tmp_path: Path, data: object, message: str) -> None:
    path = tmp_path / "scenes.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_scenes(path)
    assert str(path) in str(exc.value) and message in str(exc.value)
