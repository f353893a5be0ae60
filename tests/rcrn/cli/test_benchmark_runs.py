"""`rcrn train` / `rcrn evaluate` on VSR and What'sUp fixtures rendered here, and bad input."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from benchmarks.base import DataError
from rcrn.cli import main
from rcrn.cli.benchmark_runs import load_run

CONFIG = str(Path(__file__).resolve().parents[3] / "rcrn" / "configs" / "vsr.yaml")
TINY = ["model.word_dim=8", "model.lstm_hidden=8", "model.joint=16", "model.hidden=16",
        "model.sim_dim=8", "model.vis_dim=8", "model.spatial_dim=4", "model.pair_dim=8",
        "model.classify_hidden=8", "region_encoder.channels=[4, 8, 8]", "data.image_size=64",
        "train.steps=4", "train.batch_size=4", "train.log_every=2", "train.eval_every=0",
        "train.num_workers=0", "eval.batch_size=8"]
SIZE = (80, 60)
#: (file name, subject box, object box) as [x, y, w, h]: cat red, table blue.
LAYOUTS = {
    "left": ([5, 20, 15, 15], [50, 20, 25, 20]),
    "right": ([55, 20, 15, 15], [5, 20, 25, 20]),
    "on": ([30, 5, 15, 15], [25, 30, 30, 20]),
    "under": ([30, 40, 15, 15], [25, 5, 30, 20]),
}


def render(path: Path, cat: list[int], table: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.full((SIZE[1], SIZE[0], 3), 230, dtype=np.uint8)
    for (x, y, w, h), colour in ((table, (40, 60, 200)), (cat, (210, 40, 40))):
        pixels[y:y + h, x:x + w] = colour
    Image.fromarray(pixels).save(path)


def coco(path: Path, images: dict[str, tuple[list[int], list[int]]]) -> None:
    data = {"images": [], "annotations": [],
            "categories": [{"id": 1, "name": "cat"}, {"id": 2, "name": "table"},
                           {"id": 3, "name": "lamp"}]}
    for i, (name, (cat, table)) in enumerate(images.items(), 1):
        data["images"].append({"id": i, "file_name": name, "width": SIZE[0],
                               "height": SIZE[1]})
        for k, (box, category) in enumerate(((cat, 1), (table, 2), ([0, 0, 8, 8], 3))):
            data["annotations"].append({"id": 10 * i + k, "image_id": i, "bbox": box,
                                        "category_id": category, "iscrowd": 0})
    path.write_text(json.dumps(data))


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def vsr_record(image: str, relation: str, label: int) -> dict:
    return {"image": image, "caption": f"The cat is {relation} the table.", "label": label,
            "relation": relation}


@pytest.fixture(scope="module")
def vsr_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("vsr")
    images = {}
    for k, (cat, table) in enumerate(LAYOUTS.values(), 1):
        name = f"{k:012d}.jpg"
        render(root / "images" / name, cat, table)
        images[name] = (cat, table)
    coco(root / "instances.json", images)
    names = list(images)
    records = []
    for name, where in zip(names, LAYOUTS):
        truth = {"left": "left of", "right": "right of", "on": "above", "under": "below"}[where]
        lie = {"left": "right of", "right": "left of", "on": "below", "under": "above"}[where]
        records += [vsr_record(name, truth, 1), vsr_record(name, lie, 0)]
    for part in ("train", "dev", "test"):
        write_jsonl(root / "splits" / "random" / f"{part}.jsonl", records)
    return root


@pytest.fixture(scope="module")
def whatsup_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("whatsup")
    images, records = {}, []
    words = {"left": "to the left of", "right": "to the right of", "on": "on",
             "under": "under"}
    for slot, (cat, table) in LAYOUTS.items():
        name = f"cat_{slot}_table.jpeg" if slot in ("on", "under") else f"cat_{slot}_of_table.jpeg"
        render(root / "data" / "controlled_images" / name, cat, table)
        images[name] = (cat, table)
        options = [f"A cat {words[slot]} a table"] + [f"A cat {words[s]} a table"
                                                       for s in words if s != slot]
        records.append({"image_path": f"data/controlled_images/{name}",
                        "caption_options": options})
    coco(root / "instances.json", images)
    (root / "controlled_images_dataset.json").write_text(json.dumps(records))
    return root


@pytest.fixture(scope="module")
def checkpoint(vsr_root, tmp_path_factory):
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("run")
    rc = main(["train", "--config", CONFIG, "--out", str(out), f"data.root={vsr_root}",
               f"data.proposals={vsr_root / 'instances.json'}", *TINY])
    assert rc == 0
    return out


def test_train_on_vsr_writes_checkpoint_metrics_and_predictions(checkpoint):
    assert (checkpoint / "last.pt").is_file()
    metrics = json.loads((checkpoint / "metrics.json").read_text())
    assert 0.0 <= metrics["accuracy"] <= 1.0 and metrics["count"] == 8
    assert set(metrics["per_relation"]) == {"left of", "right of", "above", "below"}
    preds = (checkpoint / "eval" / "preds.txt").read_text().split()
    assert len(preds) == 8 and set(preds) <= {"0", "1"}
    logs = [json.loads(x) for x in (checkpoint / "metrics.jsonl").read_text().splitlines()]
    losses = [r for r in logs if "loss" in r]
    assert losses and all(r["grd"] == 0.0 and r["match"] > 0 for r in losses)


def test_evaluate_vsr_and_whatsup_from_the_checkpoint(checkpoint, vsr_root, whatsup_root,
                                                      tmp_path, capsys):
    out = tmp_path / "vsr"
    rc = main(["evaluate", "--checkpoint", str(checkpoint / "last.pt"), "--benchmark", "vsr",
               "--root", str(vsr_root), "--split", "random/test", "--out", str(out)])
    assert rc == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert 0.0 <= metrics["accuracy"] <= 1.0 and metrics["count"] == 8
    assert len((out / "preds.txt").read_text().split()) == 8
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 8
    assert "per_relation" in capsys.readouterr().out

    out = tmp_path / "whatsup"
    rc = main(["evaluate", "--checkpoint", str(checkpoint / "last.pt"), "--benchmark",
               "whatsup", "--root", str(whatsup_root), "--split", "controlled_a",
               "--proposals", str(whatsup_root / "instances.json"), "--out", str(out), "--json"])
    assert rc == 0
    metrics = json.loads((out / "metrics.json").read_text())
    for key in ("accuracy", "pair_accuracy", "set_accuracy"):
        assert 0.0 <= metrics[key] <= 1.0, key
    assert metrics["count"] == 4
    rows = [line.split(", ") for line in (out / "scores.txt").read_text().splitlines()]
    assert len(rows) == 4 and all(len(r) == 4 for r in rows)
    # the official scorer reads the scores file back to the same numbers
    assert main(["score", "--benchmark", "whatsup", "--root", str(whatsup_root), "--split",
                 "controlled_a", "--predictions", str(out / "scores.txt"), "--json"]) == 0
    scored = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert scored["accuracy"] == metrics["accuracy"]


def test_ground_truth_boxes_are_kept_to_the_caption_concepts(vsr_root):
    run = load_run("vsr", vsr_root, "random/test", str(vsr_root / "instances.json"),
                   pixels=True, image_size=40)
    p = run.problems[0]
    assert p.proposals.labels == ["cat", "table"] and p.proposals.image_size == (40, 40)
    assert np.allclose(p.proposals.boxes[0], [5 / 2, 20 * 40 / 60, 10, 35 * 40 / 60])
    assert np.asarray(p.meta["image"]).shape == (40, 40, 3)
    assert p.referent_box is None and p.match == 1


def _expect(root, benchmark, split, proposals, *needles):
    with pytest.raises(DataError) as info:
        load_run(benchmark, root, split, proposals, pixels=True)
    for needle in needles:
        assert needle in str(info.value), (needle, str(info.value))


def test_bad_vsr_input_names_the_record(vsr_root, tmp_path, checkpoint, capsys):
    coco_file = str(vsr_root / "instances.json")
    good = vsr_record("000000000001.jpg", "left of", 1)
    split = tmp_path / "splits" / "random" / "test.jsonl"
    (tmp_path / "images").symlink_to(vsr_root / "images")

    write_jsonl(split, [good, vsr_record("000000000009.jpg", "left of", 1)])
    _expect(tmp_path, "vsr", "random/test", coco_file, "test.jsonl line 2",
            "000000000009.jpg")  # not among the COCO images
    coco(tmp_path / "more.json", {"000000000009.jpg": LAYOUTS["left"]})
    _expect(tmp_path, "vsr", "random/test", str(tmp_path / "more.json"), "line 2",
            "not found")  # in the annotations but no image file

    write_jsonl(split, [good, vsr_record("../../outside.jpg", "left of", 1)])
    render(tmp_path.parent / "outside.jpg", *LAYOUTS["left"])
    coco(tmp_path / "out.json", {"../../outside.jpg": LAYOUTS["left"]})
    _expect(tmp_path, "vsr", "random/test", str(tmp_path / "out.json"), "line 2",
            "leads out of the data root")

    write_jsonl(split, [good, {k: v for k, v in good.items() if k != "caption"}])
    _expect(tmp_path, "vsr", "random/test", coco_file, "line 2", "'caption' missing")
    write_jsonl(split, [dict(good, relation="beyond")])
    _expect(tmp_path, "vsr", "random/test", coco_file, "line 1", "beyond")
    write_jsonl(split, [good])
    _expect(tmp_path, "vsr", "random/test", str(tmp_path / "none.json"), "none.json")

    # through the command line: exit code 2 and the message on stderr
    write_jsonl(split, [good, vsr_record("000000000009.jpg", "left of", 0)])
    rc = main(["evaluate", "--checkpoint", str(checkpoint / "last.pt"), "--benchmark", "vsr",
               "--root", str(tmp_path), "--split", "random/test", "--proposals",
               str(tmp_path / "more.json"), "--out", str(tmp_path / "ev")])
    err = capsys.readouterr().err
    assert rc == 2 and "line 2" in err and "000000000009.jpg" in err
    rc = main(["evaluate", "--checkpoint", str(checkpoint / "last.pt"), "--benchmark", "vsr",
               "--root", str(tmp_path)])  # the checkpoint's data.eval_split, absent here
    assert rc == 2 and "split 'random/dev' not found" in capsys.readouterr().err


def test_bad_whatsup_input_names_the_record(whatsup_root, tmp_path):
    coco_file = str(whatsup_root / "instances.json")
    records = json.loads((whatsup_root / "controlled_images_dataset.json").read_text())
    data = tmp_path / "controlled_images_dataset.json"
    (tmp_path / "data").symlink_to(whatsup_root / "data")

    data.write_text(json.dumps([records[0], dict(records[1], caption_options=records[1][
        "caption_options"][:3])]))
    _expect(tmp_path, "whatsup", "controlled_a", coco_file, "record 1", "3 caption options")
    data.write_text(json.dumps([records[0], {"caption_options": records[1]["caption_options"]}]))
    _expect(tmp_path, "whatsup", "controlled_a", coco_file, "record 1", "'image_path' missing")
    data.write_text(json.dumps([dict(records[0], image_path="data/cat_near_table.jpeg")]))
    _expect(tmp_path, "whatsup", "controlled_a", coco_file, "record 0", "'near'")
    data.write_text(json.dumps([records[0], dict(records[1],
                                                 image_path="../cat_right_of_table.jpeg")]))
    _expect(tmp_path, "whatsup", "controlled_a", coco_file, "record 1",
            "leads out of the data root")
    missing = dict(records[1], image_path="data/controlled_images/cat_right_of_sofa.jpeg")
    coco(tmp_path / "more.json", {"cat_left_of_table.jpeg": LAYOUTS["left"],
                                  "cat_right_of_sofa.jpeg": LAYOUTS["right"]})
    data.write_text(json.dumps([records[0], missing]))
    _expect(tmp_path, "whatsup", "controlled_a", str(tmp_path / "more.json"), "record 1",
            "cat_right_of_sofa.jpeg", "not found")
