// GetRequiredPackages: the resource plugins a program needs, read from the package.json files under its
// node_modules directories, as the official host reads them (getPackagesFromDir, getPackageInfo).

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func (h *nodeHost) GetRequiredPackages(ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	packages, sdks := findPackages(req.GetInfo().GetProgramDirectory())
	warnIncompatibleSDKs(sdks)
	return &pulumirpc.GetRequiredPackagesResponse{Packages: packages}, nil
}

// warnIncompatibleSDKs prints upstream's warning when two copies of @pulumi/pulumi differ in major version
// (or in minor version before 1.0): their runtimes would not share one engine connection.
func warnIncompatibleSDKs(sdks map[string]semver.Version) {
	var firstPath string
	var first semver.Version
	for path, version := range sdks {
		if firstPath == "" {
			firstPath, first = path, version
			continue
		}
		if ok, message := compatibleVersions(version, first); !ok {
			fmt.Fprintf(os.Stderr, "Found incompatible versions of @pulumi/pulumi. %s\n"+
				"  Version %s referenced at %s\n  Version %s referenced at %s\n",
				message, first, firstPath, version, path)
			return
		}
	}
}

// compatibleVersions is upstream's rule for two @pulumi/pulumi versions.
func compatibleVersions(a, b semver.Version) (bool, string) {
	switch {
	case a.Major == 0 && b.Major == 0:
		if a.Minor != b.Minor {
			return false, "Differing major or minor versions are not supported."
		}
	case a.Major >= 1 && a.Major <= 2 && b.Major >= 1 && b.Major <= 2:
	case a.Major > 2 || b.Major > 2:
		if a.Major != b.Major {
			return false, "Differing major versions are not supported."
		}
	case a.Major == 1 && b.Major == 0 && b.Minor == 17 || b.Major == 1 && a.Major == 0 && a.Minor == 17:
	default:
		return false, "Differing major or minor versions are not supported."
	}
	return true, ""
}

// findPackages walks the program directory (following symlinks once, skipping nested policy packs) and
// reports every package.json below a node_modules directory that declares `"pulumi": {"resource": true}`,
// and where each copy of @pulumi/pulumi is, with its version. Like the official host it reports what it
// could read and only logs the errors.
func findPackages(root string) ([]*pulumirpc.PackageDependency, map[string]semver.Version) {
	var found []*pulumirpc.PackageDependency
	sdks := map[string]semver.Version{}
	visited := map[string]bool{}
	var walk func(dir string, inNodeModules bool)
	walk = func(dir string, inNodeModules bool) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if visited[dir] {
			return
		}
		visited[dir] = true
		entries, err := os.ReadDir(dir)
		if err != nil {
			logging.V(3).Infof("reading plugin dir %s: %v", dir, err)
			return
		}
		childInNodeModules := inNodeModules || filepath.Base(dir) == "node_modules"
		for _, entry := range entries {
			path := filepath.Join(dir, entry.Name())
			isDir := entry.IsDir()
			if entry.Type()&fs.ModeSymlink != 0 {
				real, err := filepath.EvalSymlinks(path)
				if err != nil {
					logging.V(3).Infof("resolving link in plugin dir %s: %v", path, err)
					continue
				}
				path = real
				fi, err := os.Stat(path)
				isDir = err == nil && fi.IsDir()
			}
			if isDir {
				if pack, _ := workspace.DetectPolicyPackPathAt(path); pack == "" {
					walk(path, childInNodeModules)
				}
			} else if inNodeModules && entry.Name() == "package.json" {
				if dep, err := readPackage(path, sdks); err != nil {
					logging.V(3).Infof("%s: %v", path, err)
				} else if dep != nil {
					found = append(found, dep)
				}
			}
		}
	}
	walk(root, false)
	return found, sdks
}

func readPackage(path string, sdks map[string]semver.Version) (*pulumirpc.PackageDependency, error) {
	var pkg struct {
		Name    string                  `json:"name"`
		Version string                  `json:"version"`
		Pulumi  plugin.PulumiPluginJSON `json:"pulumi"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &pkg)
	}
	if err != nil {
		return nil, err
	}
	if pkg.Name == "@pulumi/pulumi" {
		v, err := semver.Parse(pkg.Version)
		if err != nil {
			return nil, fmt.Errorf("could not understand version %s: %w", pkg.Version, err)
		}
		sdks[path] = v
	}
	if !pkg.Pulumi.Resource {
		return nil, nil
	}
	name, version := pkg.Pulumi.Name, pkg.Pulumi.Version
	if name == "" {
		if !strings.HasPrefix(pkg.Name, "@pulumi/") { // third-party packages must name their plugin
			return nil, fmt.Errorf("missing \"name\" for the third-party plugin '%s' in its \"pulumi\" section", pkg.Name)
		}
		name = strings.TrimPrefix(pkg.Name, "@pulumi/")
	}
	if version == "" {
		version = pkg.Version
	}
	if version == "" {
		return nil, errors.New("missing expected \"version\" property")
	}
	if !strings.HasPrefix(version, "v") {
		version = "v" + version
	}
	param := func(p *plugin.PulumiParameterizationJSON) *pulumirpc.PackageParameterization {
		if p == nil {
			return nil
		}
		return &pulumirpc.PackageParameterization{Name: p.Name, Version: p.Version, Value: p.Value}
	}
	return &pulumirpc.PackageDependency{
		Name: name, Kind: "resource", Version: version, Server: pkg.Pulumi.Server,
		Parameterization: param(pkg.Pulumi.Parameterization), Extension: param(pkg.Pulumi.ExtensionParameterization),
	}, nil
}
