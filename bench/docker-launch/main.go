// Command docker-launch is the engine's own pace for the docker-launch benchmark: it creates,
// starts, waits for and removes N containers of one image through the Engine API client, at
// most J at a time, and prints the seconds it took. run.sh sets it beside `jikken run` and
// docker-compose.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

func main() {
	n := flag.Int("n", 100, "containers to run")
	j := flag.Int("j", 8, "containers at once")
	image := flag.String("image", "", "image to run (required)")
	flag.Parse()
	if *image == "" || *n < 1 || *j < 1 {
		fmt.Fprintln(os.Stderr, "usage: docker-launch -image IMAGE [-n 100] [-j 8]")
		os.Exit(2)
	}
	took, err := launch(context.Background(), *image, *n, *j)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docker-launch:", err)
		os.Exit(1)
	}
	fmt.Printf("%.2f\n", took.Seconds())
}

func launch(ctx context.Context, image string, n, j int) (time.Duration, error) {
	api, err := client.New(client.FromEnv)
	if err != nil {
		return 0, err
	}
	defer api.Close()
	if _, err := api.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return 0, err
	}
	start := time.Now()
	jobs := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range j {
		wg.Go(func() {
			for range jobs {
				errs <- once(ctx, api, image)
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return time.Since(start), errors.Join(all...)
}

// once is one container's life: create, start, wait, remove.
func once(ctx context.Context, api *client.Client, image string) error {
	c, err := api.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: image, Cmd: []string{"true"}, Labels: map[string]string{"dev.jikken.bench": "sdk"}}})
	if err != nil {
		return err
	}
	defer api.ContainerRemove(context.WithoutCancel(ctx), c.ID, client.ContainerRemoveOptions{Force: true})
	if _, err := api.ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
		return err
	}
	w := api.ContainerWait(ctx, c.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case r := <-w.Result:
		if r.StatusCode != 0 {
			return fmt.Errorf("container exited %d", r.StatusCode)
		}
		return nil
	case err := <-w.Error:
		return err
	}
}
