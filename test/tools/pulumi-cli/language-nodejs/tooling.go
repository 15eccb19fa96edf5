// The RPCs behind `pulumi about` and `pulumi install`, as the official host answers them.

package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// packageManager resolves the project's package manager (the `packagemanager` option, else from lock files).
func packageManager(info *pulumirpc.ProgramInfo) (npm.PackageManager, error) {
	opts, err := parseOptions(info.GetOptions().AsMap())
	if err != nil {
		return nil, fmt.Errorf("failed to parse options: %w", err)
	}
	pm, err := npm.ResolvePackageManager(opts.packagemanager, info.GetProgramDirectory())
	if err != nil {
		return nil, fmt.Errorf("could not resolve packagemanager: %w", err)
	}
	return pm, nil
}

func (h *nodeHost) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	pm, err := packageManager(req.GetInfo())
	if err != nil {
		return nil, err
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("could not find executable \"node\": %w", err)
	}
	resp := &pulumirpc.AboutResponse{Executable: nodeBin, Metadata: map[string]string{"packagemanager": pm.Name()}}
	if version, err := nodeVersion(ctx, nodeBin); err == nil {
		resp.Version = version
	}
	if pmBin, err := exec.LookPath(pm.Name()); err == nil {
		version, err := rememberedVersion("--version", pmBin, func() (string, error) {
			v, err := pm.Version()
			return v.String(), err
		})
		if err == nil {
			resp.Metadata["packagemanagerVersion"] = version
		}
	}
	if version, ok := typescriptVersion(req.GetInfo().GetProgramDirectory(), nodeBin); ok {
		resp.Metadata["typescriptVersion"] = version
	}
	return resp, nil
}

func (h *nodeHost) GetProgramDependencies(ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	pm, err := packageManager(req.GetInfo())
	if err != nil {
		return nil, err
	}
	packages, err := pm.ListPackages(ctx, req.GetInfo().GetProgramDirectory(), req.GetTransitiveDependencies())
	if err != nil {
		return nil, fmt.Errorf("failed to get node dependencies: %w", err)
	}
	resp := &pulumirpc.GetProgramDependenciesResponse{}
	for _, p := range packages {
		resp.Dependencies = append(resp.Dependencies, &pulumirpc.DependencyInfo{Name: p.Name, Version: p.Version})
	}
	return resp, nil
}

// InstallDependencies installs the program's packages with its package manager, from the npm/yarn
// workspace root when the program is in one. Unlike upstream it never installs a Node.js version with fnm
// (`--use-language-version-tools`), and it does not run tsc for its conformance tests.
func (h *nodeHost) InstallDependencies(req *pulumirpc.InstallDependenciesRequest,
	server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer closer.Close()
	_, _ = stdout.Write([]byte("Installing dependencies...\n\n"))
	root := req.GetInfo().GetProgramDirectory()
	if workspaceRoot, err := npm.FindWorkspaceRoot(root); err == nil {
		fmt.Fprintf(stdout, "Detected workspace root at %s\n", workspaceRoot)
		root = workspaceRoot
	} else if !errors.Is(err, npm.ErrNotInWorkspace) {
		return fmt.Errorf("failure while trying to find workspace root: %w", err)
	}
	opts, err := parseOptions(req.GetInfo().GetOptions().AsMap())
	if err != nil {
		return fmt.Errorf("failed to parse options: %w", err)
	}
	if _, err := npm.Install(server.Context(), opts.packagemanager, root, opts.production, stdout, stderr); err != nil {
		return err
	}
	_, _ = stdout.Write([]byte("Finished installing dependencies\n\n"))
	return closer.Close()
}
