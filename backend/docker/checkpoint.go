package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/moby/moby/client"
)

// Without bind mounts, a trial's checkpoint folder travels through the archive endpoint too:
// copied into the container before each start, and out of it once the container has ended,
// into a fresh folder that then takes the place of the old one. A runner killed while the
// attempt runs loses what that attempt saved (the folder on this host is the one it started
// from); with bind mounts the trial writes this host's folder in place.

// copyCheckpointIn copies the trial's checkpoint folder to /jikken/checkpoint in the container,
// open to any user, as copyIn does the output folder.
func (p *process) copyCheckpointIn(ctx context.Context) error {
	var buf bytes.Buffer
	if err := checkpointArchive(&buf, p.a.CheckpointDir); err != nil {
		return fmt.Errorf("pack the checkpoint of %s: %w", p.a.Trial.Name, err)
	}
	err := p.b.engine(ctx, func() error {
		_, err := p.b.api.CopyToContainer(ctx, p.id, client.CopyToContainerOptions{
			DestinationPath: "/", Content: bytes.NewReader(buf.Bytes()), AllowOverwriteDirWithFile: true})
		return err
	})
	if err != nil {
		return fmt.Errorf("copy the checkpoint into the container of %s: %w", p.a.Trial.Name, err)
	}
	return nil
}

// checkpointArchive writes a tar of dir's folders and regular files under
// jikken/checkpoint/, with a file entry first where the folder goes, so the engine replaces
// whatever an earlier start left there.
func checkpointArchive(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	name := strings.TrimPrefix(containerCheckpoint, "/")
	for _, h := range []*tar.Header{
		{Name: path.Dir(name) + "/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: name, Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: name + "/", Typeflag: tar.TypeDir, Mode: 0o777},
	} {
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." || !(d.IsDir() || d.Type().IsRegular()) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h := &tar.Header{Name: name + "/" + filepath.ToSlash(rel), ModTime: info.ModTime(), Mode: 0o666}
		if d.IsDir() {
			h.Name, h.Typeflag, h.Mode = h.Name+"/", tar.TypeDir, 0o777
			return tw.WriteHeader(h)
		}
		h.Typeflag, h.Size = tar.TypeReg, info.Size()
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = io.CopyN(tw, f, h.Size)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// collectCheckpoint copies /jikken/checkpoint out of the ended container into a fresh folder
// beside the checkpoint folder, then puts it in the folder's place.
func (p *process) collectCheckpoint(ctx context.Context) error {
	content, err := p.copyOut(ctx, containerCheckpoint, "the checkpoint")
	if err != nil {
		return err
	}
	defer content.Close()
	dir := p.a.CheckpointDir
	fresh, old := dir+".incoming", dir+".old"
	if err := errors.Join(os.RemoveAll(fresh), os.Mkdir(fresh, 0o755)); err != nil {
		return fmt.Errorf("collect the checkpoint of %s: %w", p.a.Trial.Name, err)
	}
	skipped, err := extractOutputs(content, fresh)
	if len(skipped) > 0 {
		if nerr := appendNotes(p.a.StderrPath, skipped); nerr != nil && err == nil {
			err = nerr
		}
	}
	if err == nil {
		err = swapFolder(dir, fresh, old)
	}
	if err != nil {
		_ = os.RemoveAll(fresh)
		return fmt.Errorf("collect the checkpoint of %s: %w", p.a.Trial.Name, err)
	}
	return nil
}

// swapFolder puts fresh in dir's place, by two renames: a runner killed between them leaves
// dir missing and old whole, which checkpoint.Folder.Prepare puts back.
func swapFolder(dir, fresh, old string) error {
	_ = os.RemoveAll(old)
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(fresh, dir); err != nil {
		return err
	}
	return os.RemoveAll(old)
}
