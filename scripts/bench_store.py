"""Benchmark the feature store against reading a bottom-up TSV.

Writes a temporary synthetic bottom-up (LXMERT layout) TSV of ``--images`` images
with ``--boxes`` boxes of ``--dim``-d float32 features, converts it into a
float16 store, and prints JSON with:

- conversion throughput (images/s), TSV indexing included;
- random reads/s of whole images from the store, cold (file pages dropped from
  the OS page cache with ``posix_fadvise``, fresh store object) and warm, with
  features in the stored float16 and converted to float32;
- the same from the TSV read line by line until the id is found (no index), and
  from the TSV with a row index (seek + base64 decode);
- the store size against the float16 feature volume (goal: ratio <= 1.05);
- the disk's own ceiling: cold reads/s of the same byte ranges of ``features.bin``
  with plain ``os.preadv`` (no store code), by one thread and by ``--threads``
  threads, and the store read cold by ``--threads`` threads (as DataLoader
  workers would), so a cold figure can be told apart from what the disk gives.

Example::

    python scripts/bench_store.py --images 2000 --boxes 100 --dim 2048
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from detectors import BottomUpTsv, convert, open_store  # noqa: E402


def _b64(arr: np.ndarray, dtype: str) -> bytes:
    return base64.b64encode(np.ascontiguousarray(arr, dtype=dtype).tobytes())


def write_tsv(path: Path, images: int, boxes: int, dim: int, seed: int) -> None:
    """A bottom-up TSV in the LXMERT column order with random boxes and features."""
    rng = np.random.default_rng(seed)
    pool = rng.standard_normal((boxes * 4, dim)).astype(np.float32)
    ids64 = np.zeros(boxes, dtype="<i8")
    conf = rng.uniform(0, 1, boxes).astype("<f4")
    with open(path, "wb") as f:
        for k in range(images):
            w, h = 640, 480
            xy = rng.uniform(0, 300, (boxes, 2))
            box = np.concatenate([xy, xy + rng.uniform(5, 300, (boxes, 2))], axis=1)
            start = int(rng.integers(0, len(pool) - boxes))
            feats = pool[start:start + boxes]
            cols = [f"{k:012d}".encode(), str(h).encode(), str(w).encode(), _b64(ids64, "<i8"),
                    _b64(conf, "<f4"), _b64(ids64, "<i8"), _b64(conf, "<f4"),
                    str(boxes).encode(), _b64(box, "<f4"), _b64(feats, "<f4")]
            f.write(b"\t".join(cols) + b"\n")
        f.flush()
        os.fsync(f.fileno())


def drop_cache(paths: list[Path]) -> bool:
    """Ask the OS to drop the cached pages of ``paths`` (works for clean pages, no root)."""
    if not hasattr(os, "posix_fadvise"):
        return False
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return True


def disk_ceiling(store_dir: Path, sample: list[str], threads: int
                 ) -> tuple[float, float, float]:
    """Seconds for cold reads of the sampled images' feature bytes: plain ``preadv``
    by one thread, by ``threads`` threads, and ``store[id]`` by ``threads`` threads."""
    from concurrent.futures import ThreadPoolExecutor

    store = open_store(store_dir)
    feats = store_dir / "features.bin"
    row = store.feature_dim * 2
    ranges = [(int(store._offsets[store._rows[i]]) * row,
               int(store._counts[store._rows[i]]) * row) for i in sample]
    fd = os.open(feats, os.O_RDONLY)

    def raw(span: tuple[int, int]) -> int:
        return os.preadv(fd, [bytearray(span[1])], span[0])

    times = []
    try:
        for workers, fn, items in ((1, raw, ranges), (threads, raw, ranges),
                                   (threads, store.__getitem__, sample)):
            drop_cache([feats])
            t0 = time.perf_counter()
            with ThreadPoolExecutor(workers) as pool:
                for _ in pool.map(fn, items):
                    pass
            times.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
    return times[0], times[1], times[2]


def rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else float("inf")


def scan_read(path: Path, image_id: str) -> int:
    """Read the TSV line by line until ``image_id``; decode that row (the no-index baseline)."""
    key = image_id.encode() + b"\t"
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(key):
                cols = line.rstrip(b"\n").split(b"\t")
                feats = np.frombuffer(base64.b64decode(cols[9]), dtype="<f4")
                return int(feats.size)
    raise KeyError(image_id)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="example: python scripts/bench_store.py --images 2000")
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--boxes", type=int, default=100)
    parser.add_argument("--dim", type=int, default=2048)
    parser.add_argument("--reads", type=int, default=2000, help="random store reads per pass")
    parser.add_argument("--scan-reads", type=int, default=5,
                        help="random reads by scanning the TSV line by line")
    parser.add_argument("--threads", type=int, default=8,
                        help="concurrent readers for the parallel cold figures (default 8)")
    parser.add_argument("--workdir", default=None, help="folder for the temporary data")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench_store_", dir=args.workdir))
    try:
        tsv = work / "features.tsv"
        t0 = time.perf_counter()
        write_tsv(tsv, args.images, args.boxes, args.dim, args.seed)
        t_write = time.perf_counter() - t0

        t0 = time.perf_counter()
        source = BottomUpTsv(tsv, dim=args.dim)
        t_index = time.perf_counter() - t0
        store_dir = work / "store"
        t0 = time.perf_counter()
        meta = convert(source, store_dir, float16=True, progress=False,
                       source_info={"format": "bottomup", "location": str(tsv)})
        t_convert = time.perf_counter() - t0

        rnd = random.Random(args.seed)
        ids = source.image_ids()
        sample = [rnd.choice(ids) for _ in range(args.reads)]
        store_files = [p for p in store_dir.iterdir() if p.suffix == ".bin"]

        cold_ok = drop_cache(store_files)
        t0 = time.perf_counter()
        store = open_store(store_dir)
        for image_id in sample:
            props = store[image_id]
        t_cold = time.perf_counter() - t0
        assert props.features is not None and props.features.shape == (args.boxes, args.dim)
        t0 = time.perf_counter()
        for image_id in sample:
            store[image_id]
        t_warm = time.perf_counter() - t0
        as32 = open_store(store_dir, dtype=np.float32)
        t0 = time.perf_counter()
        for image_id in sample:
            as32[image_id]
        t_warm32 = time.perf_counter() - t0

        t_raw, t_raw_par, t_cold_par = disk_ceiling(store_dir, sample, args.threads)

        scan_sample = sample[: args.scan_reads]
        drop_cache([tsv])
        t0 = time.perf_counter()
        for image_id in scan_sample:
            scan_read(tsv, image_id)
        t_scan = time.perf_counter() - t0

        idx_sample = sample[: max(1, args.reads // 10)]
        drop_cache([tsv])
        t0 = time.perf_counter()
        for image_id in idx_sample:
            source[image_id]
        t_idx_cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        for image_id in idx_sample:
            source[image_id]
        t_idx_warm = time.perf_counter() - t0

        fp16_volume = args.images * args.boxes * args.dim * 2
        store_bytes = store.nbytes()
        result = {
            "images": args.images, "boxes_per_image": args.boxes, "feature_dim": args.dim,
            "tsv_bytes": tsv.stat().st_size, "tsv_write_s": round(t_write, 2),
            "tsv_index_s": round(t_index, 2),
            "convert_s": round(t_convert, 2),
            "convert_images_per_s": rate(args.images, t_convert + t_index),
            "store_dtype": meta["dtype"],
            "store_bytes": store_bytes, "float16_feature_bytes": fp16_volume,
            "store_size_ratio": round(store_bytes / fp16_volume, 4),
            "store_size_goal_met": store_bytes <= 1.05 * fp16_volume,
            "store_reads_per_s_cold": rate(len(sample), t_cold),
            "store_reads_per_s_warm": rate(len(sample), t_warm),
            "store_reads_per_s_warm_as_float32": rate(len(sample), t_warm32),
            "cold_means_page_cache_dropped": cold_ok,
            "store_reads_per_s_cold_threads": rate(len(sample), t_cold_par),
            "disk_reads_per_s_cold": rate(len(sample), t_raw),
            "disk_reads_per_s_cold_threads": rate(len(sample), t_raw_par),
            "disk_mb_per_s_cold_threads": round(len(sample) * args.boxes * args.dim * 2
                                                / t_raw_par / 1e6, 1),
            "threads": args.threads,
            "store_reads_goal_met_warm": len(sample) / t_warm >= 2000,
            "store_reads_goal_met_cold": len(sample) / t_cold >= 2000,
            "tsv_scan_reads_per_s_cold": rate(len(scan_sample), t_scan),
            "tsv_indexed_reads_per_s_cold": rate(len(idx_sample), t_idx_cold),
            "tsv_indexed_reads_per_s_warm": rate(len(idx_sample), t_idx_warm),
            "speedup_warm_vs_tsv_scan": round(t_scan / len(scan_sample)
                                              / (t_warm / len(sample)), 1),
        }
        print(json.dumps(result, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
