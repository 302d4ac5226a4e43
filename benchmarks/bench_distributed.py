"""Iterative parameter mixing (onlinelearn.distributed) on news20 and mnist: the report of
issue 10, item 5.

1. Test accuracy against mixing epochs for 1, 2, 4, 8 shards (contiguous blocks of the training
   set after one random permutation of its rows, seed 0), computed with ``mix_in_process``,
   which the cluster run equals bit for bit (tests/test_distributed.py).
2. Wall time of ``ParameterMixing.fit`` on a LocalCluster of 1 and of 2 worker processes
   (one thread each), shards given as svmlight files read by the workers.
3. Bytes per epoch: every epoch sends the mixed model to each shard and brings one model back
   per shard, i.e. 2 x S x (pickled model size); the same on paper for 64 workers.

    ONLINELEARN_DATA=../shared/data python benchmarks/bench_distributed.py --epochs 5
"""

from __future__ import annotations

import argparse
import pickle
import tempfile
import time
from pathlib import Path

import numpy as np

import onlinelearn as ol
from onlinelearn.datasets import shared_data_path
from onlinelearn.distributed import ParameterMixing, mix_in_process
from onlinelearn.io import dump_svmlight, load_svmlight

SETS = {"news20": 56438, "mnist": 784}


def learners():
    return {
        "PA-I (b=0.1)": lambda: ol.PassiveAggressiveClassifier(
            variant="PA-I", C=1.0, intercept_scaling=0.1, average=False
        ),
        "Perceptron averaged": lambda: ol.Perceptron(average=True),
    }


def shards_of(X, y, S):
    cuts = np.linspace(0, X.shape[0], S + 1).astype(int)
    return [(X[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--sets", nargs="+", default=list(SETS))
    p.add_argument("--skip-cluster", action="store_true")
    args = p.parse_args()
    for name in args.sets:
        d = SETS[name]
        X, y = load_svmlight(shared_data_path(name, "train"), n_features=d)
        # the files are sorted by class: shuffle the rows once (seed 0), then cut the shards
        perm = np.random.default_rng(0).permutation(X.shape[0])
        X, y = X[perm], y[perm]
        Xt, yt = load_svmlight(shared_data_path(name, "test"), n_features=d)
        print(f"\n## {name}: {X.shape[0]} x {d}, {X.nnz} nonzeros; test {Xt.shape[0]} rows")
        for label, make in learners().items():
            print(f"\n{label}: test accuracy after each mixing epoch")
            print("| shards | " + " | ".join(f"epoch {e + 1}" for e in range(args.epochs)) + " |")
            print("|---" * (args.epochs + 1) + "|")
            for S in (1, 2, 4, 8):
                accs = []
                mix_in_process(
                    make(),
                    shards_of(X, y, S),
                    args.epochs,
                    callback=lambda e, m, ms, accs=accs, Xt=Xt, yt=yt: accs.append(m.score(Xt, yt)),
                )
                print(f"| {S} | " + " | ".join(f"{a:.4f}" for a in accs) + " |")
        model = mix_in_process(learners()["PA-I (b=0.1)"](), shards_of(X[:200], y[:200], 1), 1)
        size = len(pickle.dumps(model))
        size32 = model._theta.astype(np.float32).nbytes
        print(
            f"\nmodel size: {size / 1e6:.2f} MB pickled (float64 weights; float32: "
            f"{size32 / 1e6:.2f} MB of weights); per epoch 2 x S x size: S=2 "
            f"{4 * size / 1e6:.1f} MB, S=64 {128 * size / 1e6:.0f} MB"
        )
        if args.skip_cluster:
            continue
        import distributed

        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i, (Xs, ys) in enumerate(shards_of(X, y, 2)):
                paths.append(Path(tmp) / f"shard{i}.svm")
                dump_svmlight(Xs, ys, paths[-1])
            for workers in (1, 2):
                with (
                    distributed.LocalCluster(
                        n_workers=workers,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        silence_logs=40,
                    ) as cluster,
                    distributed.Client(cluster) as client,
                ):
                    warm = ParameterMixing(learners()["PA-I (b=0.1)"](), 1, client, d)
                    warm.fit(paths)  # start-up, imports and compilation on the workers
                    t0 = time.perf_counter()
                    pm = ParameterMixing(learners()["PA-I (b=0.1)"](), args.epochs, client, d)
                    pm.fit(paths)
                    wall = time.perf_counter() - t0
                print(
                    f"wall time, 2 shards, {args.epochs} epochs (shards read by the workers), "
                    f"{workers} worker(s): {wall:.2f} s; accuracy {pm.score(Xt, yt):.4f}"
                )


if __name__ == "__main__":
    main()
