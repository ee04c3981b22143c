"""Tests of jikken_track; run with: python3 -m unittest -v test_jikken_track (from this folder)."""

import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def run_trial(code, env_dir=None, cwd=None):
    """Run code in a fresh interpreter, as a trial would, and return the completed process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JIKKEN_")}
    env["PYTHONPATH"] = HERE
    if env_dir is not None:
        env["JIKKEN_OUTPUT_DIR"] = env_dir
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class TrackTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def test_metric_lines(self):
        run_trial(
            """
            import jikken_track as jt
            jt.log_metric("loss", 0.12, step=3)
            jt.log_metric("nan", float("nan"))
            jt.log_metric("inf", float("inf"), step=1)
            jt.log_metric("ninf", float("-inf"))
            with jt.track.path("epoch3/"):
                jt.log_metric("acc", 1)
                with jt.path("val/"):
                    jt.log_metric("acc", 2)
            """,
            env_dir=self.out,
        )
        with open(os.path.join(self.out, "metrics.jsonl"), encoding="utf-8") as f:
            raw = f.read()
        first = raw.splitlines()[0]
        self.assertRegex(first, r'^\{"name":"loss","value":0\.12,"step":3,"ts":\d{13}\}$')
        lines = read_lines(os.path.join(self.out, "metrics.jsonl"))
        self.assertEqual([l["value"] for l in lines[1:4]], ["NaN", "Infinity", "-Infinity"])
        self.assertNotIn("step", lines[1])
        self.assertEqual([l["name"] for l in lines[4:]], ["epoch3/acc", "epoch3/val/acc"])

    def test_result_decorator_params(self):
        run_trial(
            """
            import jikken_track as jt

            @jt.track
            def evaluate():
                return {"accuracy": 0.93, "worst": float("-inf")}

            @jt.track("final_loss")
            def loss():
                return float("nan")

            evaluate()
            with jt.track.path("epoch3/"):
                loss()
            jt.result(score=0.5, items=[1, float("inf")])
            jt.result(score=0.75)
            jt.log_params({"lr": 0.01}, model="resnet")
            """,
            env_dir=self.out,
        )
        with open(os.path.join(self.out, "result.json"), encoding="utf-8") as f:
            res = json.load(f)
        self.assertEqual(
            res,
            {
                "evaluate": {"accuracy": 0.93, "worst": "-Infinity"},
                "epoch3/final_loss": "NaN",
                "score": 0.75,
                "items": [1, "Infinity"],
            },
        )
        with open(os.path.join(self.out, "logged_params.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f), {"lr": 0.01, "model": "resnet"})
        self.assertEqual([n for n in os.listdir(self.out) if n.startswith(".tmp-")], [])

    def test_save_artifact(self):
        src = os.path.join(self.tmp.name, "model.bin")
        with open(src, "w") as f:
            f.write("weights")
        proc = run_trial(
            """
            import jikken_track as jt
            with jt.track.path("epoch3/"):
                print(jt.save_artifact(%r))
            for bad in ["../escape", "/abs", "a/../../b"]:
                try:
                    jt.save_artifact(%r, bad)
                except ValueError:
                    print("refused", bad)
            """
            % (src, src),
            env_dir=self.out,
        )
        self.assertIn("epoch3/model.bin", proc.stdout)
        self.assertEqual(proc.stdout.count("refused"), 3)
        with open(os.path.join(self.out, "artifacts", "epoch3", "model.bin")) as f:
            self.assertEqual(f.read(), "weights")

    def test_by_hand_writes_locally_and_says_where(self):
        proc = run_trial(
            """
            import jikken_track as jt
            jt.log_metric("loss", 1.5)
            jt.result(done=1)
            """,
            cwd=self.tmp.name,
        )
        self.assertIn("JIKKEN_OUTPUT_DIR is not set", proc.stderr)
        where = proc.stderr.strip().rsplit(" ", 1)[-1]
        self.assertTrue(where.startswith("jikken-out" + os.sep), where)
        lines = read_lines(os.path.join(self.tmp.name, where, "metrics.jsonl"))
        self.assertEqual(lines[0]["value"], 1.5)

    def test_rejects_bad_values(self):
        import jikken_track as jt

        with self.assertRaises(TypeError):
            jt.log_metric("x", "not a number")
        with self.assertRaises(ValueError):
            jt.log_metric("", 1)

    def test_encode(self):
        import jikken_track as jt

        self.assertEqual(jt.encode({"a": [math.nan, (math.inf, -math.inf)], "b": 1}), {"a": ["NaN", ["Infinity", "-Infinity"]], "b": 1})


if __name__ == "__main__":
    unittest.main()
