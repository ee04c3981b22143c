package kubernetes

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// explain turns a client-go error into one that says what failed and what to do. what is the
// action ("create Job jk-...").
func (b *Backend) explain(what string, err error) error {
	if err == nil {
		return nil
	}
	ns := b.cfg.Namespace
	var uerr *url.Error
	var oerr *net.OpError
	switch {
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota"):
		return fmt.Errorf("%s: resource quota of namespace %s exceeded: %v; lower the trials' resources or -j, or ask for more quota", what, ns, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: forbidden by RBAC in namespace %s: %v; the account needs create/get/list/watch/delete on jobs and get/list/watch on pods (and pods/log)", what, ns, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: the API server rejected the credentials of the kubeconfig (%v); log in again or fix the kubeconfig", what, err)
	case apierrors.IsNotFound(err) && strings.Contains(err.Error(), "namespaces"):
		return fmt.Errorf("%s: namespace %s does not exist; create it (kubectl create namespace %s) or pass --namespace / JIKKEN_K8S_NAMESPACE", what, ns, ns)
	case errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &oerr), errors.As(err, &uerr) && !apierrors.IsTimeout(err):
		return fmt.Errorf("%s: cannot reach the Kubernetes API server at %s: %v; check the cluster is up and the kubeconfig's server address", what, b.host, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
