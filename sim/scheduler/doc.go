// Package scheduler is a scheduling framework that mirrors kube-scheduler's extension points
// (queue sort, pre-filter, filter, score with weights and normalisation, reserve, bind, and
// preemption as a post-filter) and the plugins of its default profile, so a scheduling idea can
// be tried in the simulator with the same structure it would have as a real plugin.
package scheduler
