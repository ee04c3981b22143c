// Package kubernetes runs trials as Kubernetes Jobs through client-go: one Job per attempt,
// labelled with its run, trial and attempt, watched (never polled) through one informer per run,
// its outputs uploaded to the store from the pod by the jikken executor (jikken trial-exec). It
// also renders a run as an Argo Workflow. It is the only package of jikken's core that imports
// k8s.io modules.
package kubernetes
