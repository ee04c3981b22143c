package docker

import (
	"context"
	"fmt"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// image is an image reference resolved once per backend: its id, the digest recorded with each
// trial, and what the backend needs to know of it.
type image struct {
	ref string

	mu          sync.Mutex
	resolved    bool
	err         error
	id          string
	digest      string
	healthcheck bool

	shellOnce sync.Once
	hasShell  bool
}

// image resolves ref on the engine (pulling it when it is missing), once.
func (b *Backend) image(ctx context.Context, ref string) (*image, error) {
	b.mu.Lock()
	img := b.images[ref]
	if img == nil {
		img = &image{ref: ref}
		b.images[ref] = img
	}
	b.mu.Unlock()

	img.mu.Lock()
	defer img.mu.Unlock()
	if !img.resolved {
		img.err = img.resolve(ctx, b)
		// An engine that did not answer is not the image's fault: try again next time.
		img.resolved = img.err == nil || !client.IsErrConnectionFailed(img.err)
	}
	return img, img.err
}

func (img *image) resolve(ctx context.Context, b *Backend) error {
	var res client.ImageInspectResult
	inspect := func() error {
		return b.engine(ctx, func() (err error) {
			res, err = b.api.ImageInspect(ctx, img.ref)
			return err
		})
	}
	err := inspect()
	if cerrdefs.IsNotFound(err) {
		if perr := b.pull(ctx, img.ref); perr != nil {
			return fmt.Errorf("image %s is not on the docker engine and pulling it failed (%v); build it (docker build -t %s .) or pull it (docker pull %s)", img.ref, perr, img.ref, img.ref)
		}
		err = inspect()
	}
	if err != nil {
		return fmt.Errorf("image %s: %w", img.ref, err)
	}
	img.id = res.ID
	img.digest = res.ID
	if len(res.RepoDigests) > 0 {
		img.digest = res.RepoDigests[0]
	}
	if c := res.Config; c != nil && c.Healthcheck != nil && len(c.Healthcheck.Test) > 0 && c.Healthcheck.Test[0] != "NONE" {
		img.healthcheck = true
	}
	return nil
}

func (b *Backend) pull(ctx context.Context, ref string) error {
	resp, err := b.api.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer resp.Close()
	return resp.Wait(ctx)
}

// shell reports whether the image has /bin/sh, found by looking into a container that is created
// for that and never started.
func (img *image) shell(ctx context.Context, b *Backend) bool {
	img.shellOnce.Do(func() {
		var res client.ContainerCreateResult
		err := b.engine(ctx, func() (err error) {
			res, err = b.api.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{
				Image: img.id, Cmd: []string{"/bin/sh"}, Entrypoint: []string{"/bin/sh"},
				Labels: map[string]string{"dev.jikken.probe": "shell"},
			}})
			return err
		})
		if err != nil {
			b.log.Warn("look for /bin/sh in image", "image", img.ref, "err", err)
			return
		}
		defer b.api.ContainerRemove(context.WithoutCancel(ctx), res.ID, client.ContainerRemoveOptions{Force: true})
		_, err = b.api.ContainerStatPath(ctx, res.ID, client.ContainerStatPathOptions{Path: "/bin/sh"})
		img.hasShell = err == nil
	})
	return img.hasShell
}
