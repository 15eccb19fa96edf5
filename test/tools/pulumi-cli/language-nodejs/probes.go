// What `About` reports, found without a process per question where an answer cannot have changed.
//
// The engine asks the language host's About on every `pulumi up` and `pulumi preview` (for the update's
// metadata). The official host answers with three processes: `node --version`, `<package manager>
// --version` and node resolving typescript's package.json. Together they cost more CPU than the rest of
// an update's language host, so this host remembers a version per executable (its real path, size and
// modification time: a reinstalled or upgraded executable is asked again) in a file beside this binary,
// and resolves TypeScript as node resolves a bare package name, reading the file itself.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

var probeMutex sync.Mutex

// probeCacheFile is where remembered versions live: beside this binary, in the per-user CLI cache.
func probeCacheFile() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(self), ".pulumi-language-nodejs.versions.json"), nil
}

// executableKey names an executable as it is now; any reinstall changes it.
func executableKey(question, path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s|%s|%d|%d", question, real, info.Size(), info.ModTime().UnixNano()), nil
}

// rememberedVersion answers `question` about the executable at `path` from the cache, or asks `probe`
// and remembers a successful answer. A cache that cannot be read or written only costs the probe.
func rememberedVersion(question, path string, probe func() (string, error)) (string, error) {
	key, keyErr := executableKey(question, path)
	file, fileErr := probeCacheFile()
	if keyErr != nil || fileErr != nil {
		return probe()
	}
	probeMutex.Lock()
	defer probeMutex.Unlock()
	known := map[string]string{}
	if data, err := os.ReadFile(file); err == nil {
		_ = json.Unmarshal(data, &known) // a damaged cache is rebuilt
	}
	if version, ok := known[key]; ok {
		return version, nil
	}
	version, err := probe()
	if err != nil {
		return "", err
	}
	known[key] = version
	if data, err := json.Marshal(known); err == nil {
		// Written whole and renamed into place: hosts of concurrent updates never read half a file.
		tmp := fmt.Sprintf("%s.%d.tmp", file, os.Getpid())
		if os.WriteFile(tmp, data, 0o644) == nil && os.Rename(tmp, file) != nil {
			_ = os.Remove(tmp)
		}
	}
	return version, nil
}

// nodeVersion is `node --version`.
func nodeVersion(ctx context.Context, nodeBin string) (string, error) {
	return rememberedVersion("--version", nodeBin, func() (string, error) {
		out, err := exec.CommandContext(ctx, nodeBin, "--version").Output()
		return strings.TrimSpace(string(out)), err
	})
}

// typescriptVersion is the version of the typescript package `require('typescript/package.json')` loads
// when run from dir: node_modules of dir and each parent, then NODE_PATH, then node's global folders.
func typescriptVersion(dir, nodeBin string) (string, bool) {
	var candidates []string
	for current := dir; ; current = filepath.Dir(current) {
		if filepath.Base(current) != "node_modules" {
			candidates = append(candidates, filepath.Join(current, "node_modules"))
		}
		if filepath.Dir(current) == current {
			break
		}
	}
	for _, entry := range filepath.SplitList(os.Getenv("NODE_PATH")) {
		if entry != "" {
			candidates = append(candidates, entry)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".node_modules"), filepath.Join(home, ".node_libraries"))
	}
	candidates = append(candidates, filepath.Join(filepath.Dir(filepath.Dir(nodeBin)), "lib", "node"))
	for _, modules := range candidates {
		data, err := os.ReadFile(filepath.Join(modules, "typescript", "package.json"))
		if err != nil {
			continue
		}
		var manifest struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(data, &manifest) != nil {
			return "", false // node's require would throw on it too
		}
		return manifest.Version, manifest.Version != ""
	}
	return "", false
}
