"""Reading runs from a jikken store into the tables of 'jikken results'."""

import gc
import json
import math
import re

from ._stores import open_store

_SPECIAL = {
    "nan": math.nan,
    "inf": math.inf,
    "+inf": math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-inf": -math.inf,
    "-infinity": -math.inf,
}
# The numbers Go's strconv.ParseFloat reads, which jikken takes a result.json or metric value
# given as text for: decimals with underscores between digits ("1_000.5", which Python's float()
# also reads) and hexadecimal ones with a binary exponent ("0x1.8p1", float.fromhex's after the
# underscores go). Text Python would also read (" 1", "1_") is not a number to jikken.
_DIGITS = r"\d(?:_?\d)*"
_DECIMAL = re.compile(r"[+-]?(?:{d}(?:\.(?:{d})?)?|\.{d})(?:[eE][+-]?{d})?\Z".format(d=_DIGITS))
_HEXDIGITS = r"[0-9a-fA-F](?:_?[0-9a-fA-F])*"
_HEX = re.compile(r"[+-]?0[xX](?:_?{h}(?:\.(?:{h})?)?|_?\.{h})[pP][+-]?{d}\Z".format(h=_HEXDIGITS, d=_DIGITS))


def _number(v):
    """Return v as a float when jikken reads it as a number (track.DecodeFloat), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = _SPECIAL.get(v.lower())
        if s is not None:
            return s
        if _DECIMAL.match(v):
            return float(v)
        if _HEX.match(v):
            return float.fromhex(v.replace("_", ""))
    return None


def _refuse_constant(name):
    raise ValueError("a bare %s is not JSON" % name)


def _metric_lines(data):
    """Return (name, value, step, ts) of each line of a metrics.jsonl. The lines jikken leaves out
    (malformed, a bare NaN, bytes that are not UTF-8, a torn last line) are left out here too: the
    runner noted each in the attempt's record, and both readers then see the same values."""
    try:
        # One decoder call for the whole file, the reader's cost at 100,000 trials; a file this
        # cannot read (a blank line, a torn or bad line) is read line by line below.
        text = data.decode("utf-8")
        objs = json.loads("[" + text.rstrip("\n").replace("\n", ",") + "]", parse_constant=_refuse_constant)
        return [(m["name"], _value(m), m.get("step"), m.get("ts") or 0) for m in objs]
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    out = []
    for raw in data.split(b"\n"):
        raw = raw.strip()
        if not raw:
            continue
        try:
            m = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
            out.append((m["name"], _value(m), m.get("step"), m.get("ts") or 0))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return out


def _value(m):
    """The value of a metric line, refusing a line jikken refuses."""
    v = m["value"]
    if v.__class__ is not float:
        v = _number(v)
        if v is None:
            raise ValueError("metric %r: value %r is not a number" % (m["name"], m["value"]))
    if not m["name"] or m["name"].__class__ is not str:
        raise ValueError("metric without a name")
    return v


def _flatten(prefix, obj, out):
    for k, v in obj.items():
        if isinstance(v, dict):
            _flatten(prefix + k + ".", v, out)
            continue
        f = _number(v)
        if f is not None:
            out[prefix + k] = f


def _final(metrics, result, key):
    """A trial's final metrics: each metric's last logged value, replaced by result.json's."""
    out = {}
    if metrics:
        for name, value, _, _ in _metric_lines(metrics):
            out[name] = value
    if result is not None:
        try:
            obj = json.loads(result)
        except ValueError as e:
            raise ValueError("%sresult.json: %s" % (key, e)) from None
        if not isinstance(obj, dict):
            raise ValueError("%sresult.json: want an object of name: number" % key)
        _flatten("", obj, out)
    return out


def _points(metrics):
    """Every line of a metrics.jsonl as (metric, step, value, time), as 'jikken results --curves'."""
    lines = _metric_lines(metrics) if metrics else []
    stamps = [ts for _, _, _, ts in lines if ts]
    t0 = min(stamps) if stamps else 0
    nxt = {}
    out = []
    for name, value, step, ts in lines:
        if step is None:
            step = nxt.get(name, 0)
        nxt[name] = nxt.get(name, 0) + 1
        out.append((name, step, value, (ts - t0) / 1000 if ts else math.nan))
    return out


_COND = re.compile(r"\s*([^=!<>]+?)\s*(==|!=|<=|>=|=|<|>)\s*(.*?)\s*\Z")


def _conditions(where):
    """where as a dict of column to a test; strings are conditions of 'jikken results --where'
    (COLUMN=VALUE, !=, <, <=, >, >=), read as jikken reads them."""
    if where is None:
        return {}
    if isinstance(where, dict):
        return dict(where)
    out = {}
    for c in [where] if isinstance(where, str) else where:
        m = _COND.match(c)
        if not m:
            raise ValueError("where %r: write COLUMN=VALUE or COLUMN<VALUE (also !=, <=, >, >=)" % c)
        col, op, value = m.groups()
        num = _number(value)
        if op in ("<", "<=", ">", ">=") and num is None:
            raise ValueError("where %r: %s compares numbers; %r is not one" % (c, op, value))
        prev = out.get(col)
        test = _test(op, value, num)
        out[col] = test if prev is None else (lambda v, a=prev, b=test: a(v) and b(v))
    return out


def _test(op, value, num):
    def equal(v):
        # The cell as the results table writes it: text as is, booleans lower-case.
        x = _number(v)
        text = v if isinstance(v, str) else "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
        return text == value or (x is not None and num is not None and not math.isnan(x) and x == num)

    def cmp(v):
        x = _number(v)
        if x is None or math.isnan(x) or num is None:
            return False
        return {"<": x < num, "<=": x <= num, ">": x > num, ">=": x >= num}[op]

    if op in ("=", "=="):
        return equal
    if op == "!=":
        return lambda v: not equal(v)
    return cmp


def _match(want, v):
    if callable(want):
        return bool(want(v))
    if isinstance(want, (list, tuple, set, frozenset)):
        return v in want
    return v == want


class _Trial:
    # final: the trial's final metrics when the run's summary gave them, else None (read them
    # from the trial's files).
    __slots__ = ("run", "name", "status", "params", "seed", "final")

    def __init__(self, run, name, status, params, seed, final=None):
        self.run, self.name, self.status, self.params, self.seed = run, name, status, params, seed
        self.final = final


def _json(store, key):
    data = store.get(key)
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError as e:
        raise ValueError("%s in %s: %s" % (key, store.location, e)) from None


def run_ids(store=None):
    """The ids of the runs in a store, oldest first (ids start with their start time)."""
    st = _open(store)
    return [r for r in st.dirs("runs/") if st.get("runs/%s/manifest.json" % r) is not None]


def _resolve(store, ref):
    """The runs ref names: a run id, a unique prefix of one, latest, or an experiment's name
    (every run of it, oldest first)."""
    ids = run_ids(store)
    if not ids:
        raise LookupError("no runs in %s" % store.location)
    if ref in ("latest", "last"):
        return [_newest(store, ids)]
    if ref in ids:
        return [ref]
    match = [i for i in ids if i.startswith(ref)]
    if len(match) == 1:
        return match
    if len(match) > 1:
        raise LookupError("%r matches several runs (%s); give more of the id" % (ref, ", ".join(match[:5])))
    runs = [i for i in ids if (_json(store, "runs/%s/manifest.json" % i) or {}).get("experiment") == ref]
    if not runs:
        raise LookupError("no run or experiment %r in %s; list runs with 'jikken runs'" % (ref, store.location))
    return runs


def _newest(store, ids):
    # Ids sort by their start second; runs started in the same second are told apart by their
    # manifests' creation times (as 'jikken results latest' does).
    stamp = len("20060102-150405")
    last = ids[-1]
    same = [i for i in ids if i[:stamp] == last[:stamp]] if len(last) >= stamp else [last]
    if len(same) == 1:
        return last
    return max(same, key=lambda i: (_json(store, "runs/%s/manifest.json" % i) or {}).get("created", ""))


_ENDED = frozenset(("succeeded", "failed", "skipped", "killed", "stopped"))


def _summary(store, run):
    """The trials of a run's summary.json by name, when it is fresh: the runner writes it as a
    run ends, naming the state.json it writes next (store/summary.go); anything that changes a
    trial later writes a new state. None when there is none or it is stale."""
    state = _json(store, "runs/%s/state.json" % run)
    if not state or state.get("status") not in _ENDED or not state.get("finished"):
        return None
    data = store.get("runs/%s/summary.json" % run)
    if not data:
        return None
    try:
        s = json.loads(data)
    except ValueError:
        return None  # a summary cut short: the trial files still hold everything
    if s.get("finished") != state["finished"]:
        return None
    return s.get("trials") or []


def _summary_final(metrics):
    for v in metrics.values():
        if v.__class__ is not float:
            break
    else:
        return metrics  # the common case: every value a JSON number with a fraction or exponent
    out = {}
    for k, v in metrics.items():
        f = _number(v)
        if f is not None:
            out[k] = f
    return out


def _trials(store, run, processes, summary=False):
    """A run's trials in plan order, services left out, with their status; with summary, their
    final metrics too when the run has a fresh summary."""
    m = _json(store, "runs/%s/manifest.json" % run)
    base = "runs/%s/trials/" % run
    plan = m.get("trials")
    entries = _summary(store, run) if summary else None
    if plan is None and entries is not None:
        return [_Trial(run, e["name"], e.get("status") or "pending", e.get("params") or {}, e.get("seed"),
                       _summary_final(e.get("metrics") or {})) for e in entries]
    if plan is None:
        # A plan of more than 1,000 trials is stored as its experiment's expansion, which only
        # jikken can redo: the trials are then those that have a record (started at least once).
        keys = [base + n + "/trial.json" for n in store.dirs(base)]
        recs = [r for r in store.map(_record, keys, processes) if r and not r[4]]
        recs.sort(key=lambda r: r[1])
        return [_Trial(run, name, status, params, seed) for name, _, status, params, _, seed in recs]
    plan = [t for t in plan if not t.get("service")]
    if entries is not None:
        # A trial without a line never started (no record): its files, if any, are read.
        byname = {e["name"]: e for e in entries}
        out = []
        for t in plan:
            e = byname.get(t["name"])
            status = (e.get("status") or "pending") if e else "pending"
            final = _summary_final(e.get("metrics") or {}) if e else None
            out.append(_Trial(run, t["name"], status, t.get("params") or {}, t.get("seed"), final))
        return out
    recs = store.map(_record, [base + t["name"] + "/trial.json" for t in plan], processes)
    return [_Trial(run, t["name"], r[2] if r else "pending", t.get("params") or {}, t.get("seed")) for t, r in zip(plan, recs)]


def _record(store, key):
    """What the reader needs of a trial.json: name, index, status, params, service, seed."""
    data = store.get(key)
    if not data:
        return None  # an empty record is one never synced before a crash: as if not written
    # jikken writes records indented, fields in a fixed order, the growing list of attempts after
    # everything read here: parsing only the part before it halves the cost of a record.
    cut = data.find(b',\n  "attempts": ')
    try:
        r = json.loads(data[:cut] + b"}") if cut > 0 else None
    except ValueError:
        r = None
    if r is None or "status" not in r:
        try:
            r = json.loads(data)
        except ValueError as e:
            raise ValueError("%s: %s" % (key, e)) from None
    return (r["name"], r.get("index", 0), r.get("status") or "pending", r.get("params") or {}, r.get("service", False), r.get("seed"))


def _trial_final(store, base):
    return _final(store.get(base + "metrics.jsonl"), store.get(base + "result.json"), base)


def _trial_points(store, base):
    return _points(store.get(base + "metrics.jsonl"))


def _head_columns(trials):
    """The columns of 'jikken results' before the metrics, preceded by run."""
    params = sorted({p for t in trials for p in t.params})
    has_seed = any(t.seed is not None for t in trials) and "seed" not in params
    return ["run", "trial", "status"] + params + (["seed"] if has_seed else []), params, has_seed


def _metric_columns(head, names):
    """Each metric's column: its name, or metric.NAME when a column before it has that name."""
    taken = set(head)
    return {m: ("metric." + m if m in taken else m) for m in sorted(names)}


def _head(t, params, has_seed):
    row = {"run": t.run, "trial": t.name, "status": t.status}
    for p in params:
        row[p] = t.params.get(p)
    if has_seed:
        row["seed"] = t.seed
    return row


def _open(store):
    if hasattr(store, "get") and hasattr(store, "dirs"):
        return store
    return open_store(store)


def load(store, run, where=None, curves=False, frame=True, processes=None):
    """Load a run's results, or every run of an experiment, as 'jikken results' prints them.

    store is a folder store's path (None: $JIKKEN_STORE, then ./.jikken), a file:// URL or
    s3://bucket/prefix (needs boto3; see docs/tracking.md). run is a run id, a unique prefix of
    one, ``latest``, or an experiment's name, which loads all its runs, oldest first.

    where keeps the rows whose columns match: a dict of column to a value, a list of values, or
    a function of the value (``{"fn": "sphere", "lr": lambda v: v < 0.1}``), or the conditions of
    'jikken results --where' as strings (``["fn=sphere", "lr<0.1"]``). Conditions on run,
    trial, status, params and seed are checked before any metric file is read.

    Without curves there is one row per trial: run, trial, status, each param, seed, and each
    metric's final value (result.json's, else the last logged). With ``curves=True`` (or a list
    of metric names to keep) there is one row per metrics.jsonl line: run, trial, status, each
    param, seed, metric, step, value, time (seconds since the trial's first timestamped line).

    Returns a pandas DataFrame when pandas is installed and frame is true, else a list of dicts.
    NaN and infinite values are floats; a value a trial never logged is None (NaN in pandas).

    The final metrics of a run that has ended come from its summary.json, one file for all its
    trials (docs/store.md); otherwise each trial's files are read, and a folder store of more
    than 4,000 trials is read by forked worker processes, one per core (at most 16);
    processes=1 reads it all in this process.
    """
    # Loading builds hundreds of thousands of dicts and none of them form cycles: Python's
    # cycle collector, run every 700 allocations, would walk them all again and again (a fifth
    # of the time at 100,000 trials).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(store, run, where, curves, frame, processes)
    finally:
        if enabled:
            gc.enable()


def _load(store, run, where, curves, frame, processes):
    st = _open(store)
    trials = [t for r in _resolve(st, run) for t in _trials(st, r, processes, summary=not curves)]
    head, params, has_seed = _head_columns(trials)
    where = _conditions(where)
    early = {k: w for k, w in where.items() if k in head}
    late = {k: w for k, w in where.items() if k not in head}
    heads = [_head(t, params, has_seed) for t in trials]
    if early:
        kept = [i for i, h in enumerate(heads) if all(_match(w, h[k]) for k, w in early.items())]
        trials, heads = [trials[i] for i in kept], [heads[i] for i in kept]
    bases = ["runs/%s/trials/%s/" % (t.run, t.name) for t in trials]
    if curves:
        keep = None if curves is True else {curves} if isinstance(curves, str) else set(curves)
        cols = head + ["metric", "step", "value", "time"]
        rows = [
            dict(h, metric=name, step=step, value=value, time=tm)
            for h, pts in zip(heads, st.map(_trial_points, bases, processes))
            for name, step, value, tm in pts
            if keep is None or name in keep
        ]
    else:
        finals = [t.final for t in trials]
        unread = [i for i, f in enumerate(finals) if f is None]
        for i, f in zip(unread, st.map(_trial_final, [bases[i] for i in unread], processes)):
            finals[i] = f
        met = _metric_columns(head, {n for f in finals for n in f})
        cols = head + list(met.values())
        rows = heads
        for h, f in zip(heads, finals):
            for name, col in met.items():
                h[col] = f.get(name)
    for k in late:
        if k not in cols:
            raise KeyError("where: no column %r; the columns are %s" % (k, ", ".join(cols)))
    if late:
        rows = [r for r in rows if all(_match(w, r[k]) for k, w in late.items())]
    if frame:
        try:
            import pandas
        except ImportError:
            return rows
        return pandas.DataFrame.from_records(rows, columns=cols)
    return rows
