{
  name: "count600",
  trials: [{
    name: "count",
    cmd: ["./count600.sh"],
    preemptible: true,
    // The time limit: the trial is warned (USR1) 8 s before its 40 s end, about step 300.
    timeout: "40s",
    checkpoint: { signal: "USR1", before: "8s" },
  }],
}
