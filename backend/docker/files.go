package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// The attempt's files travel through the engine's archive endpoint (what `docker cp` uses)
// unless the backend binds (Files): the paths of the runner's machine mean nothing to a remote
// engine (DOCKER_HOST=tcp://..., ssh://...), and the files the runner keeps are written by the
// runner itself, so they are its own whatever user the container ran as.

// attemptInput is the input archive of an attempt whose params.json is at paramsHost on the
// runner's machine ("" when it has none).
func attemptInput(paramsHost string) ([]byte, error) {
	var params []byte
	if paramsHost != "" {
		var err error
		if params, err = os.ReadFile(paramsHost); err != nil {
			return nil, fmt.Errorf("read params: %w", err)
		}
	}
	return inputArchive(params, paramsHost != "")
}

// inputArchive is the tar copied to / of the created container before each start: an empty
// /jikken/out open to any user (mode 0777, for an image's unprivileged USER) and, when the
// attempt has params, /jikken/params.json. A file entry where the folder goes, before the
// folder's own entry, makes the engine remove whatever the folder holds (a start cut short by
// an engine restart left its files there); the folder entry after it replaces that file.
func inputArchive(params []byte, hasParams bool) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	out, paramsName := strings.TrimPrefix(containerOutputDir, "/"), strings.TrimPrefix(containerParams, "/")
	hdrs := []*tar.Header{
		{Name: path.Dir(out) + "/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: out, Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: out + "/", Typeflag: tar.TypeDir, Mode: 0o777},
	}
	if hasParams {
		hdrs = append(hdrs, &tar.Header{Name: paramsName, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(params))})
	}
	for _, h := range hdrs {
		h.ModTime = now
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Name == paramsName {
			if _, err := tw.Write(params); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// copyIn puts the attempt's input archive into the container, which must not be running. With
// bind mounts it empties the output folder instead.
func (p *process) copyIn(ctx context.Context) error {
	if p.b.bind {
		return clearDir(p.a.OutputDir)
	}
	if p.a.CheckpointDir != "" {
		if err := p.copyCheckpointIn(ctx); err != nil {
			return err
		}
	}
	err := p.b.engine(ctx, func() error {
		_, err := p.b.api.CopyToContainer(ctx, p.id, client.CopyToContainerOptions{
			DestinationPath: "/", Content: bytes.NewReader(p.input), AllowOverwriteDirWithFile: true})
		return err
	})
	if err != nil {
		return fmt.Errorf("copy params.json and the output folder into the container of %s: %w", p.a.Trial.Name, err)
	}
	return nil
}

// collectOutputs copies /jikken/out of the ended container into the attempt's output folder and
// notes in stderr.log what it left behind. With bind mounts the files are there already.
func (p *process) collectOutputs(ctx context.Context) error {
	if p.b.bind {
		return nil
	}
	content, err := p.copyOut(ctx, containerOutputDir, "the outputs")
	if err != nil {
		return err
	}
	defer content.Close()
	skipped, err := extractOutputs(content, p.a.OutputDir)
	if len(skipped) > 0 {
		if nerr := appendNotes(p.a.StderrPath, skipped); nerr != nil && err == nil {
			err = nerr
		}
	}
	if err != nil {
		return fmt.Errorf("collect the outputs of %s: %w", p.a.Trial.Name, err)
	}
	if p.a.CheckpointDir != "" {
		return p.collectCheckpoint(ctx)
	}
	return nil
}

// copyOut is the archive of the folder src of the ended container (what names it in errors).
func (p *process) copyOut(ctx context.Context, src, what string) (io.ReadCloser, error) {
	var res client.CopyFromContainerResult
	err := p.b.engine(ctx, func() (err error) {
		res, err = p.b.api.CopyFromContainer(ctx, p.id, client.CopyFromContainerOptions{SourcePath: src})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("copy %s out of the container of %s: %w", what, p.a.Trial.Name, err)
	}
	return res.Content, nil
}

func appendNotes(file string, notes []string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(f, "jikken: %s\n", n)
	}
	return f.Close()
}

// extractOutputs writes the archive of a container's output folder (its first entry is the
// folder itself, every other entry is under it) into dir, as the calling process's user. Only
// folders and regular files (and hard links between them) are written, with their permission
// bits (files keep their executable bits; the owner may always read and write) and files with
// their modification times. Symbolic links, devices, fifos and the like are skipped and
// reported as notes, as the runner leaves them out of the store anyway. An entry whose name is
// not a clean path under the folder (absolute, with "..") is refused with an error: the engine
// never makes such archives.
func extractOutputs(r io.Reader, dir string) (skipped []string, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	base := ""
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return skipped, nil
		}
		if err != nil {
			return skipped, fmt.Errorf("read the outputs archive: %w", err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if base == "" {
			name := strings.TrimSuffix(hdr.Name, "/")
			if hdr.Typeflag != tar.TypeDir || !localName(name) || strings.Contains(name, "/") {
				return skipped, fmt.Errorf("%s is not a folder in the container (%q, type %q); the trial must leave it a folder", containerOutputDir, hdr.Name, hdr.Typeflag)
			}
			base = name
			continue
		}
		rel, err := underBase(hdr.Name, base)
		if err != nil {
			return skipped, err
		}
		shown := path.Join(containerOutputDir, rel)
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = extractDir(root, rel, hdr)
		case tar.TypeReg:
			err = extractFile(root, rel, hdr, tr)
		case tar.TypeLink:
			var target string
			if target, err = underBase(hdr.Linkname, base); err == nil {
				err = root.Link(target, rel)
			}
		case tar.TypeSymlink:
			skipped = append(skipped, fmt.Sprintf("left out %s, a symbolic link (to %s): only files and folders are collected", shown, hdr.Linkname))
		default:
			skipped = append(skipped, fmt.Sprintf("left out %s, not a file or folder (tar type %q): only files and folders are collected", shown, hdr.Typeflag))
		}
		if err != nil {
			return skipped, fmt.Errorf("write output %s: %w", rel, err)
		}
	}
}

// underBase is the path an archive entry has inside the folder base, or an error when it is
// not a clean relative path under base.
func underBase(name, base string) (string, error) {
	clean := strings.TrimSuffix(name, "/")
	rel, ok := strings.CutPrefix(clean, base+"/")
	if !localName(clean) || !ok || rel == "" {
		return "", fmt.Errorf("refused outputs archive entry %q: not a path under %s/", name, base)
	}
	return filepath.FromSlash(rel), nil
}

// localName reports whether name is a clean relative slash path that stays where it is rooted.
func localName(name string) bool {
	return name != "" && path.Clean(name) == name && filepath.IsLocal(filepath.FromSlash(name))
}

func extractDir(root *os.Root, rel string, hdr *tar.Header) error {
	mode := os.FileMode(hdr.Mode)&os.ModePerm | 0o700
	if err := root.MkdirAll(rel, mode); err != nil {
		return err
	}
	return root.Chmod(rel, mode)
}

// extractFile streams one file of the archive to disk.
func extractFile(root *os.Root, rel string, hdr *tar.Header, r io.Reader) error {
	if parent := filepath.Dir(rel); parent != "." {
		if err := root.MkdirAll(parent, 0o755); err != nil {
			return err
		}
	}
	mode := os.FileMode(hdr.Mode)&os.ModePerm | 0o600
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	err = errors.Join(err, f.Close())
	if err != nil {
		return err
	}
	if err := root.Chmod(rel, mode); err != nil {
		return err
	}
	return root.Chtimes(rel, hdr.ModTime, hdr.ModTime)
}

func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
