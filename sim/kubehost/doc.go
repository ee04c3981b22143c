// Package kubehost runs kube-scheduler framework plugins (k8s.io/kube-scheduler/framework,
// the interfaces out-of-tree plugins are written against since Kubernetes 1.35) unchanged,
// inside the simulator and in simulated time.
//
// A Host is a sim.Scheduler. It implements framework.Handle over the simulated cluster, shows
// each simulated pod and node to plugins as a real v1.Pod and v1.Node (converted once and
// cached), and runs a profile's plugins in kube-scheduler's order: PreEnqueue, QueueSort,
// PreFilter, Filter, PostFilter, PreScore, Score and NormalizeScore with weights, Reserve,
// Permit, then PreBind, Bind and PostBind. A pod a Permit plugin makes wait stays reserved
// until a plugin allows or rejects it, or until its timeout passes in simulated time. Plugins
// run one at a time (the Parallelizer is sequential) and the host draws ties from a seeded
// generator, so a run is the same every time.
//
// Only what the simulator models is there. There is no API server: ClientSet answers reads of
// nodes and pods from the simulation and evicts a running pod it is asked to delete (so
// preemption plugins work); every other request fails with ErrNoAPIServer. DRA, CSI, pod
// groups and the API dispatcher are absent (nil), as in a kube-scheduler with those features
// off.
package kubehost
