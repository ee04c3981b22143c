package docker

import (
	"context"
	"fmt"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// userNetwork counts the containers of this backend on a network, so a network the backend
// created is removed when its last container is.
type userNetwork struct {
	refs    int
	created bool
}

// acquireNetworks makes sure every named network exists, creating (and labelling with the run)
// those that do not, and counts one more container on each.
func (b *Backend) acquireNetworks(ctx context.Context, run string, names []string) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var got []string
	for _, name := range names {
		if builtinNetwork(name) {
			got = append(got, name)
			continue
		}
		n := b.networks[name]
		if n == nil {
			created, err := b.ensureNetwork(ctx, run, name)
			if err != nil {
				b.releaseLocked(got, run)
				return nil, err
			}
			n = &userNetwork{created: created}
			b.networks[name] = n
		}
		n.refs++
		got = append(got, name)
	}
	return got, nil
}

// builtinNetwork reports whether a network mode is the engine's own (never created or removed).
func builtinNetwork(name string) bool {
	switch name {
	case "bridge", "host", "none", "default":
		return true
	}
	return strings.HasPrefix(name, "container:")
}

// ensureNetwork creates the network unless it exists, and reports whether this run owns it
// (created it now, or an earlier runner of the run did).
func (b *Backend) ensureNetwork(ctx context.Context, run, name string) (bool, error) {
	var owned bool
	err := b.engine(ctx, func() error {
		res, err := b.api.NetworkInspect(ctx, name, client.NetworkInspectOptions{})
		if err == nil {
			owned = res.Network.Labels[LabelRun] == run
			return nil
		}
		if !cerrdefs.IsNotFound(err) {
			return err
		}
		_, err = b.api.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge", Labels: map[string]string{LabelRun: run}})
		if cerrdefs.IsConflict(err) {
			return nil // someone else made it meanwhile: theirs
		}
		owned = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("network %s: %w", name, err)
	}
	return owned, nil
}

// releaseNetworks counts one container less on each network and removes the networks this run
// created once nothing of the backend uses them.
func (b *Backend) releaseNetworks(names []string, run string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.releaseLocked(names, run)
}

func (b *Backend) releaseLocked(names []string, run string) {
	for _, name := range names {
		n := b.networks[name]
		if n == nil {
			continue
		}
		if n.refs--; n.refs > 0 {
			continue
		}
		delete(b.networks, name)
		if n.created {
			ctx := context.Background()
			err := b.engine(ctx, func() error {
				_, err := b.api.NetworkRemove(ctx, name, client.NetworkRemoveOptions{})
				return err
			})
			if err != nil && !cerrdefs.IsNotFound(err) {
				b.log.Warn("remove network", "network", name, "run", run, "err", err)
			}
		}
	}
}

// removeRunNetworks removes the networks labelled with the run that no container uses any more.
func (b *Backend) removeRunNetworks(ctx context.Context, run string) error {
	var res client.NetworkListResult
	err := b.engine(ctx, func() (err error) {
		res, err = b.api.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("label", LabelRun+"="+run)})
		return err
	})
	if err != nil {
		return fmt.Errorf("list networks of run %s: %w", run, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range res.Items {
		if u := b.networks[n.Name]; u != nil && u.refs > 0 {
			continue
		}
		_, err := b.api.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		switch {
		case err == nil, cerrdefs.IsNotFound(err):
		case cerrdefs.IsConflict(err) || cerrdefs.IsPermissionDenied(err) || cerrdefs.IsFailedPrecondition(err):
			// Still in use by another container of the run: removed with the last one.
		default:
			return fmt.Errorf("remove network %s of run %s: %w", n.Name, run, err)
		}
	}
	return nil
}
