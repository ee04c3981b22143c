// Package extender calls kube-scheduler extenders over HTTP with the real extender protocol
// (filter, prioritize, bind and preempt verbs, JSON bodies shaped like
// k8s.io/kube-scheduler/extender/v1), so an extender binary written for a real cluster plugs
// into the simulator unchanged.
package extender
