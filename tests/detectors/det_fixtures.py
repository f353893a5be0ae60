"""Writers of fixture files in the exact upstream layouts, for the detectors tests."""

from __future__ import annotations

import base64
import json
import pickle
from pathlib import Path

import numpy as np


def b64(arr: np.ndarray, dtype: str = "<f4") -> str:
    return base64.b64encode(np.ascontiguousarray(arr, dtype=dtype).tobytes()).decode("ascii")


def random_image(rng: np.random.Generator, image_id: str, n: int, dim: int = 2048,
                 size: tuple[int, int] = (640, 480)) -> dict:
    """Boxes (xyxy px inside ``size``), scores, class names and features of one image."""
    w, h = size
    xy = rng.uniform(0, 0.6, (n, 2)) * [w, h]
    wh = rng.uniform(0.05, 0.4, (n, 2)) * [w, h]
    boxes = np.concatenate([xy, np.minimum(xy + wh, [w, h])], axis=1).astype(np.float32)
    classes = ["dog", "cat", "cup", "table", "person"]
    return {"id": image_id, "size": size, "boxes": boxes,
            "scores": rng.uniform(0.1, 1.0, n).astype(np.float32),
            "labels": [classes[i % len(classes)] for i in range(n)],
            "class_ids": np.arange(n, dtype=np.int64) % len(classes),
            "features": rng.normal(0, 1, (n, dim)).astype(np.float32)}


def write_lines(path: Path, lines: list[str], lineidx: bool) -> None:
    """Write TSV lines and, if asked, the VinVL ``.lineidx`` of their byte offsets."""
    data = [line.encode("utf-8") + b"\n" for line in lines]
    path.write_bytes(b"".join(data))
    if lineidx:
        offsets, pos = [], 0
        for d in data:
            offsets.append(pos)
            pos += len(d)
        path.with_suffix(".lineidx").write_text("".join(f"{o}\n" for o in offsets))


def vinvl_line(img: dict, with_size: bool = True) -> str:
    objects = [{"rect": [float(v) for v in b], "class": lab, "conf": float(s),
                "feature": b64(f)}
               for b, lab, s, f in zip(img["boxes"], img["labels"], img["scores"],
                                       img["features"])]
    payload = {"objects": objects}
    if with_size:
        payload.update({"image_h": img["size"][1], "image_w": img["size"][0]})
    return f"{img['id']}\t{json.dumps(payload)}"


def oscar_line(img: dict, layout: str, dtype: str = "<f4", with_box: bool = True) -> str:
    feats = img["features"]
    if with_box:
        w, h = img["size"]
        b = img["boxes"].astype(np.float64)
        norm = np.stack([b[:, 0] / w, b[:, 1] / h, b[:, 2] / w, b[:, 3] / h,
                         (b[:, 2] - b[:, 0]) / w, (b[:, 3] - b[:, 1]) / h], axis=1)
        feats = np.concatenate([feats, norm], axis=1)
    n = len(feats)
    if layout == "json":
        return f"{img['id']}\t{json.dumps({'num_boxes': n, 'features': b64(feats, dtype)})}"
    return f"{img['id']}\t{n}\t{b64(feats, dtype)}"


def bottomup_line(img: dict, old: bool) -> str:
    w, h = img["size"]
    n = len(img["boxes"])
    if old:  # image_id, image_w, image_h, num_boxes, boxes, features
        cols = [img["id"], str(w), str(h), str(n), b64(img["boxes"]), b64(img["features"])]
    else:  # img_id, img_h, img_w, objects_id, objects_conf, attrs_id, attrs_conf, num_boxes, ...
        cols = [img["id"], str(h), str(w), b64(img["class_ids"], "<i8"), b64(img["scores"]),
                b64(np.zeros(n), "<i8"), b64(np.zeros(n)), str(n), b64(img["boxes"]),
                b64(img["features"])]
    return "\t".join(cols)


def write_uniter(path: Path, img: dict, classes: int = 6) -> None:
    w, h = img["size"]
    b = img["boxes"].astype(np.float64)
    norm = np.stack([b[:, 0] / w, b[:, 1] / h, b[:, 2] / w, b[:, 3] / h,
                     (b[:, 2] - b[:, 0]) / w, (b[:, 3] - b[:, 1]) / h], axis=1)
    soft = np.zeros((len(b), classes), dtype=np.float32)
    soft[np.arange(len(b)), img["class_ids"] + 1] = 1.0
    np.savez(path, features=img["features"].astype(np.float16), norm_bb=norm.astype(np.float16),
             conf=img["scores"], soft_labels=soft)


def write_gitm_mr(root: Path, images: list[dict], per_file: int = 2, max_obj: int = 126) -> None:
    """``vinvl_objects/rois_info.pkl`` + ``gt_objects_{file}.h5`` as in the GITM-MR release."""
    import h5py

    root.mkdir(parents=True, exist_ok=True)
    info = {}
    for start in range(0, len(images), per_file):
        chunk = images[start:start + per_file]
        file_no = start // per_file
        feats = np.zeros((len(chunk), max_obj, 2048), dtype=np.float32)
        for idx, img in enumerate(chunk):
            feats[idx, :len(img["boxes"])] = img["features"]
            info[int(img["id"])] = {"size": img["size"], "num_objs": len(img["boxes"]),
                                    "box": img["boxes"], "cls": list(img["labels"]),
                                    "file": file_no, "idx": idx}
        with h5py.File(root / f"gt_objects_{file_no}.h5", "w") as f:
            f.create_dataset("features", data=feats)
    with open(root / "rois_info.pkl", "wb") as f:
        pickle.dump(info, f)


def write_sgmn(root: Path, images: list[dict], max_obj: int = 126) -> None:
    """``gt_objects_info.json`` + ``gt_objects_0.h5`` (features, bboxes) as in Ref-Reasoning."""
    import h5py

    root.mkdir(parents=True, exist_ok=True)
    feats = np.zeros((len(images), max_obj, 2048), dtype=np.float32)
    boxes = np.zeros((len(images), max_obj, 4), dtype=np.float32)
    info = {}
    for idx, img in enumerate(images):
        n = len(img["boxes"])
        feats[idx, :n] = img["features"]
        boxes[idx, :n] = img["boxes"]
        info[img["id"]] = {"file": 0, "idx": idx, "objectsNum": n, "width": img["size"][0],
                           "height": img["size"][1]}
    with h5py.File(root / "gt_objects_0.h5", "w") as f:
        f.create_dataset("features", data=feats)
        f.create_dataset("bboxes", data=boxes)
    (root / "gt_objects_info.json").write_text(json.dumps(info))
