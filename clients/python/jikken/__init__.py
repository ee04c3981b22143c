"""jikken: read a jikken store's runs into pandas, the notebook side of 'jikken results'.

    import jikken
    df = jikken.load(".jikken", "latest")                       # one row per trial
    df.groupby("algo")["best"].median()
    curves = jikken.load(".jikken", "optimize", curves=["best"])  # every run of an experiment

The trial side (writing metrics from a trial) is the module jikken_track, installed with this
package; neither needs anything beyond the standard library (pandas for DataFrames, boto3 for
s3:// stores).
"""

from ._read import load, run_ids

__all__ = ["load", "run_ids"]
