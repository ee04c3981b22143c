"""Tests of the reader jikken.load; run with: python3 -m unittest -v test_jikken_reader (from this folder).

They use lists of dicts (frame=False), so they need no pandas; results/python_test.go checks the
DataFrames against 'jikken compare'.
"""

import json
import math
import os
import shutil
import tempfile
import unittest

import jikken


def write(root, key, data):
    path = os.path.join(root, *key.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w" if isinstance(data, str) else "wb") as f:
        f.write(data)


def make_run(root, run, trials, experiment="exp", compact=False, created="2026-11-28T12:00:00Z"):
    """trials: (name, params, seed, status or None, metrics lines, result object or None)."""
    plan = [{"name": n, "index": i, "params": p, "seed": s, "cmd": ["x"]} for i, (n, p, s, *_rest) in enumerate(trials)]
    manifest = {"run_id": run, "experiment": experiment, "created": created, "trials": None if compact else plan}
    if compact:
        manifest["trials_expansion"] = {"count": len(plan), "sha256": "0" * 64}
    write(root, "runs/%s/manifest.json" % run, json.dumps(manifest))
    for i, (name, params, seed, status, lines, result) in enumerate(trials):
        base = "runs/%s/trials/%s/" % (run, name)
        if status:
            write(root, base + "trial.json", json.dumps({"run": run, "name": name, "index": i, "status": status, "params": params, "seed": seed}))
        if lines is not None:
            write(root, base + "metrics.jsonl", lines)
        if result is not None:
            write(root, base + "result.json", json.dumps(result))


class ReaderTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
        lines = (
            '{"name":"loss","value":3,"step":1,"ts":1000}\n'
            '{"name":"loss","value":"NaN","ts":3500}\n'
            '{"name":"acc","value":0.5}\n'
        )
        make_run(self.root, "20261128-120000-a", [
            ("t0", {"lr": 0.1, "opt": "sgd"}, 1, "succeeded", lines, {"acc": 0.9, "eval": {"f1": "0.75"}, "ok": True, "note": "x"}),
            ("t1", {"lr": 0.01, "opt": "adam"}, 2, "failed", '{"name":"loss","value":2}\n{"name":"lo', None),
            ("t2", {"lr": 0.01, "opt": "adam"}, 3, None, None, None),
        ])

    def load(self, run="latest", **kw):
        return jikken.load(self.root, run, frame=False, **kw)

    def test_final_values(self):
        rows = self.load()
        self.assertEqual([r["trial"] for r in rows], ["t0", "t1", "t2"])
        self.assertEqual([r["status"] for r in rows], ["succeeded", "failed", "pending"])
        self.assertEqual(list(rows[0]), ["run", "trial", "status", "lr", "opt", "seed", "acc", "eval.f1", "loss"])
        r = rows[0]
        self.assertEqual((r["acc"], r["eval.f1"], r["seed"]), (0.9, 0.75, 1))  # result.json replaces the logged 0.5
        self.assertTrue(math.isnan(r["loss"]))
        self.assertNotIn("ok", r)  # booleans and text are not numbers, as in jikken results
        self.assertEqual(rows[1]["loss"], 2)  # a torn last line is skipped
        self.assertIsNone(rows[2]["loss"])

    def test_curves(self):
        rows = self.load(curves=True)
        got = [(r["trial"], r["metric"], r["step"], r["value"], r["time"]) for r in rows]
        self.assertEqual(got[0], ("t0", "loss", 1, 3, 0.0))
        self.assertEqual(got[1][:3], ("t0", "loss", 1))  # no step: its index among the metric's lines
        self.assertTrue(math.isnan(got[1][3]))
        self.assertEqual(got[1][4], 2.5)
        self.assertTrue(math.isnan(got[2][4]))  # no timestamp
        self.assertEqual(got[3], ("t1", "loss", 0, 2, got[3][4]))
        self.assertEqual(len(self.load(curves=["acc"])), 1)

    def test_where(self):
        self.assertEqual([r["trial"] for r in self.load(where={"opt": "adam"})], ["t1", "t2"])
        self.assertEqual([r["trial"] for r in self.load(where={"lr": lambda v: v > 0.05})], ["t0"])
        self.assertEqual([r["trial"] for r in self.load(where={"status": ["failed", "pending"], "loss": 2})], ["t1"])
        with self.assertRaisesRegex(KeyError, "no column 'nope'"):
            self.load(where={"nope": 1})

    def test_pruned(self):
        # A trial its search stopped early: status "pruned", with the values it logged until then.
        make_run(self.root, "20261128-140000-p", [
            ("p0", {"lr": 0.1}, 1, "succeeded", '{"name":"loss","value":0.2,"step":9}\n', None),
            ("p1", {"lr": 0.5}, 2, "pruned", '{"name":"loss","value":0.9,"step":1}\n{"name":"loss","value":0.8,"step":3}\n', None),
        ])
        rows = self.load("20261128-140000-p")
        self.assertEqual([(r["status"], r["loss"]) for r in rows], [("succeeded", 0.2), ("pruned", 0.8)])
        self.assertEqual([r["trial"] for r in self.load("20261128-140000-p", where="status=pruned")], ["p1"])
        self.assertEqual([r["step"] for r in self.load("20261128-140000-p", curves=True, where={"status": "pruned"})], [1, 3])

    def test_eliminated(self):
        # A trial its race dropped before it ran: status "eliminated", no values; where= keeps it.
        make_run(self.root, "20261128-140000-e", [
            ("e0", {"c": 1}, 1, "succeeded", '{"name":"cost","value":2}\n', None),
            ("e1", {"c": 3}, 1, "eliminated", None, None),
        ])
        rows = self.load("20261128-140000-e")
        self.assertEqual([(r["status"], r["cost"]) for r in rows], [("succeeded", 2), ("eliminated", None)])
        self.assertEqual([r["trial"] for r in self.load("20261128-140000-e", where="status=eliminated")], ["e1"])

    def test_where_strings_as_the_cli(self):
        # The conditions of 'jikken results --where': text or numeric =, !=, and numeric comparisons
        # that a NaN or missing value never meets.
        self.assertEqual([r["trial"] for r in self.load(where="lr<0.05")], ["t1", "t2"])
        self.assertEqual([r["trial"] for r in self.load(where=["opt=adam", "seed>=3"])], ["t2"])
        self.assertEqual([r["trial"] for r in self.load(where="lr=0.10")], ["t0"])
        self.assertEqual([r["trial"] for r in self.load(where="opt!=adam")], ["t0"])
        self.assertEqual([r["trial"] for r in self.load(where="loss<5")], ["t1"])  # t0's NaN, t2's nothing
        with self.assertRaisesRegex(ValueError, "compares numbers"):
            self.load(where="lr<low")

    def test_resolve(self):
        make_run(self.root, "20261128-130000-b", [("u", {}, None, "succeeded", None, {"trial": 5})], experiment="other")
        make_run(self.root, "20261128-130000-c", [("v", {}, None, "succeeded", None, {"x": 1})], experiment="exp",
                 created="2026-11-28T13:00:00.5Z")
        self.assertEqual(jikken.run_ids(self.root), ["20261128-120000-a", "20261128-130000-b", "20261128-130000-c"])
        self.assertEqual({r["run"] for r in self.load("latest")}, {"20261128-130000-c"})
        self.assertEqual([r["trial"] for r in self.load("exp")], ["t0", "t1", "t2", "v"])
        rows = self.load("20261128-130000-b")
        self.assertEqual(rows[0]["metric.trial"], 5)  # a metric named like a column is prefixed
        with self.assertRaisesRegex(LookupError, "several runs"):
            self.load("20261128-13")
        with self.assertRaisesRegex(LookupError, "no run or experiment"):
            self.load("zzz")

    def test_compact_manifest(self):
        # A plan above 1,000 trials is stored as its experiment's expansion: trials come from records.
        make_run(self.root, "20261128-140000-big", [
            ("b", {"k": 2}, 9, "succeeded", None, {"m": 2}),
            ("a", {"k": 1}, 8, "succeeded", None, {"m": 1}),
        ], compact=True)
        rows = self.load("20261128-140000-big")
        self.assertEqual([(r["trial"], r["k"], r["seed"], r["m"]) for r in rows], [("b", 2, 9, 2.0), ("a", 1, 8, 1.0)])

    def test_bad_lines_are_left_out_as_jikken_does(self):
        # A line without a value, a bare NaN and bytes that are not UTF-8 are left out (the
        # runner noted them in the record), as jikken's own reader does: the others are kept.
        write(self.root, "runs/20261128-120000-a/trials/t0/metrics.jsonl",
              '{"name":"loss"}\n{"name":"loss","value":1}\n{"name":"loss","value":NaN}\n')
        with open(os.path.join(self.root, "runs/20261128-120000-a/trials/t0/metrics.jsonl"), "ab") as f:
            f.write(b'{"name":"l\xffss","value":3}\n')
        rows = self.load()
        self.assertEqual(rows[0]["loss"], 1)
        self.assertNotIn("l\ufffdss", rows[0])

    def end_run(self, run, entries, finished="2026-11-28T12:00:05.5Z", state_finished=None, status="succeeded"):
        """End run as the runner does: summary.json (the trials' final results), then state.json."""
        write(self.root, "runs/%s/summary.json" % run, json.dumps({"finished": finished, "trials": entries}))
        write(self.root, "runs/%s/state.json" % run, json.dumps(
            {"status": status, "started": "2026-11-28T11:00:00Z", "finished": state_finished or finished}))

    def test_fresh_summary_replaces_the_trial_files(self):
        # Values that differ from the files show which the reader took.
        self.end_run("20261128-120000-a", [
            {"name": "t0", "index": 0, "status": "succeeded", "params": {"lr": 0.1, "opt": "sgd"}, "seed": 1,
             "metrics": {"acc": 0.25, "loss": "NaN", "up": "Infinity", "n": 3}},
            {"name": "t1", "index": 1, "status": "killed", "metrics": {"loss": 7}},
        ])
        rows = self.load()
        self.assertEqual([r["status"] for r in rows], ["succeeded", "killed", "pending"])
        self.assertEqual(list(rows[0]), ["run", "trial", "status", "lr", "opt", "seed", "acc", "loss", "n", "up"])
        self.assertEqual((rows[0]["acc"], rows[0]["up"], rows[0]["n"], rows[1]["loss"]), (0.25, math.inf, 3.0, 7.0))
        self.assertIs(type(rows[0]["n"]), float)
        self.assertTrue(math.isnan(rows[0]["loss"]))
        self.assertEqual([r["trial"] for r in self.load(where="loss>5")], ["t1"])
        # Curves are not in the summary: they come from metrics.jsonl.
        self.assertEqual(self.load(curves=True)[0]["value"], 3)

    def test_stale_summary_is_ignored(self):
        entries = [{"name": "t0", "index": 0, "status": "failed", "metrics": {"acc": 0.25}}]
        want = self.load()
        for kw in ({"state_finished": "2026-11-28T12:09:00Z"},  # ended again (a resume, a kill)
                   {"status": "running"}):                      # resumed, running
            self.end_run("20261128-120000-a", entries, **kw)
            got = self.load()
            self.assertEqual(repr(got), repr(want), kw)

    def test_summary_of_a_compact_plan(self):
        make_run(self.root, "20261128-140000-big", [
            ("b", {"k": 2}, 9, "succeeded", None, {"m": 2}),
            ("a", {"k": 1}, 8, "succeeded", None, {"m": 1}),
        ], compact=True)
        self.end_run("20261128-140000-big", [
            {"name": "b", "index": 0, "status": "succeeded", "params": {"k": 2}, "seed": 9, "metrics": {"m": 2}},
            {"name": "a", "index": 1, "status": "failed", "params": {"k": 1}, "seed": 8, "metrics": {"m": 0.5}},
        ])
        rows = self.load("20261128-140000-big")
        self.assertEqual([(r["trial"], r["status"], r["k"], r["seed"], r["m"]) for r in rows],
                         [("b", "succeeded", 2, 9, 2.0), ("a", "failed", 1, 8, 0.5)])

    def test_missing_store(self):
        with self.assertRaisesRegex(FileNotFoundError, "no such folder"):
            jikken.load(os.path.join(self.root, "nope"), "latest")

    def test_s3_without_boto3_says_what_to_do(self):
        try:
            import boto3  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(ImportError, "needs boto3"):
                jikken.load("s3://bucket/prefix", "latest")
        else:
            self.skipTest("boto3 is installed")


if __name__ == "__main__":
    unittest.main()
