package uploads

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// FS is the Store on a local directory: each object is the file root/<tenant>/<key>, mode 0600,
// in a directory of mode 0700.
//
// Every access goes through an os.Root opened on the directory, so besides ObjectPath's checks
// the kernel-level lookup itself cannot leave the root (no "..", no symbolic link pointing out).
// A Put writes a dot-file beside the object, syncs it, renames it into place and syncs the
// directory: a reader sees the whole object or none, also after a crash.
type FS struct {
	dir  string
	root *os.Root
}

// NewFS opens (creating it, mode 0700, when missing) the directory dir as a Store. Close it when
// done.
func NewFS(dir string) (*FS, error) {
	if dir == "" {
		return nil, errors.New("uploads: the upload directory is not set")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("uploads: upload directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("uploads: upload directory: %w", err)
	}
	return &FS{dir: dir, root: root}, nil
}

// Dir is the directory the store was opened on.
func (s *FS) Dir() string { return s.dir }

// Close releases the directory.
func (s *FS) Close() error { return s.root.Close() }

// Put implements Store.
func (s *FS) Put(ctx context.Context, tenant, key string, r io.Reader, size int64, contentType string) (Object, error) {
	name, err := s.name(tenant, key)
	if err != nil {
		return Object{}, err
	}
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	if _, err := s.root.Lstat(name); err == nil {
		return Object{}, ErrExists
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Object{}, fmt.Errorf("uploads: %w", err)
	}
	if err := s.root.MkdirAll(tenant, 0o700); err != nil {
		return Object{}, fmt.Errorf("uploads: tenant directory: %w", err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := tenant + "/." + key + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Object{}, fmt.Errorf("uploads: %w", err)
	}
	closed, renamed := false, false
	defer func() {
		if !closed {
			_ = f.Close()
		}
		if !renamed {
			_ = s.root.Remove(tmp)
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), ctxReader{ctx: ctx, r: r})
	if err != nil {
		return Object{}, fmt.Errorf("uploads: store: %w", err)
	}
	if size >= 0 && n != size {
		return Object{}, ErrSizeMismatch
	}
	if err := f.Sync(); err != nil {
		return Object{}, fmt.Errorf("uploads: sync: %w", err)
	}
	closed = true
	if err := f.Close(); err != nil {
		return Object{}, fmt.Errorf("uploads: close: %w", err)
	}
	// Keys are never reused: a second Put of the same key lost a race it could only lose by a
	// UUID collision, and must not replace bytes a row may already be bound to.
	if _, err := s.root.Lstat(name); err == nil {
		return Object{}, ErrExists
	}
	if err := s.root.Rename(tmp, name); err != nil {
		return Object{}, fmt.Errorf("uploads: rename: %w", err)
	}
	renamed = true
	if d, err := s.root.Open(tenant); err == nil {
		err = d.Sync()
		_ = d.Close()
		if err != nil {
			return Object{}, fmt.Errorf("uploads: sync directory: %w", err)
		}
	}
	return Object{TenantID: tenant, Key: key, ContentType: contentType, SizeBytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Open implements Store; only a regular file is an object.
func (s *FS) Open(ctx context.Context, tenant, key string) (io.ReadCloser, error) {
	name, err := s.name(tenant, key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := s.root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("uploads: open: %w", err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("uploads: open: %w", err)
		}
		return nil, ErrNotFound
	}
	return f, nil
}

// Delete implements Store.
func (s *FS) Delete(ctx context.Context, tenant, key string) error {
	name, err := s.name(tenant, key)
	if err != nil {
		return err
	}
	if err := s.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("uploads: delete: %w", err)
	}
	return nil
}

// name checks (tenant, key) with ObjectPath against the store's directory and returns the
// object's name relative to the root.
func (s *FS) name(tenant, key string) (string, error) {
	if _, err := ObjectPath(s.dir, tenant, key); err != nil {
		return "", err
	}
	return objectName(tenant, key)
}

// ctxReader stops a long copy when the request is abandoned.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
