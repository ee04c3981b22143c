// Package k8stest starts a real Kubernetes control plane for tests: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler built from source by scripts/ci/k8s.sh, with KWOK
// faking nodes and the lifecycle of their pods (no kubelet can run here). Everything binds to
// 127.0.0.1. Tests that need it are skipped unless JIKKEN_K8S_BIN names the binaries' folder.
package k8stest
