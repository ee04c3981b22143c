// Package fidelity holds the test that measures how closely the simulator's kube-default
// profile reproduces the real kube-scheduler: heterogeneous KWOK nodes on a real control plane,
// pods created one at a time, and each binding compared with the simulator's scores for the
// same pod on the same cluster state. It runs under `make test-k8s`.
package fidelity
