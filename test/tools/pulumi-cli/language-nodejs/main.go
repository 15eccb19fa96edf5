// Command pulumi-language-nodejs is a minimal stand-in for Pulumi's official Node.js language host.
//
// The official host lives in the module github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3,
// which the Go module proxy available to this project does not serve, so the test tooling builds this one
// instead. It is written against the LanguageRuntime gRPC service of github.com/pulumi/pulumi/sdk/v3 and
// launches programs the way the official host does: `node [nodeargs] <@pulumi/pulumi/cmd/run resolved
// from the program directory> --monitor … --engine … --organization … --project … --root-directory …
// --stack … --pwd … [--dry-run] --parallel N [--tracing …] <entry point> [args…]`, with PULUMI_CONFIG,
// PULUMI_CONFIG_SECRET_KEYS, PULUMI_NODEJS_TYPESCRIPT and PULUMI_NODEJS_TSCONFIG_PATH in its environment.
// Unlike the official host it hands node the engine's resource monitor address itself rather than a
// forwarding proxy, and passes no --sync directory (@pulumi/pulumi no longer makes synchronous invokes).
//
// Implemented RPCs: Handshake, GetRequiredPackages, Run (exit code 32 maps to RunResponse.Bail),
// GetPluginInfo, About, GetProgramDependencies and Cancel. Everything else (GetRequiredPlugins, which CLI
// v3.259.0 only calls when GetRequiredPackages is missing, InstallDependencies, code generation, RunPlugin,
// Pack, Link, debugging…) answers Unimplemented.
//
// Startup follows the plugin protocol of the Pulumi CLI: optional flags (--tracing, and the -v/--logtostderr
// logging flags), then the engine address as the last positional argument; the chosen port is printed on
// stdout, and the host stops on SIGINT or when the engine stops answering health checks.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const (
	runModule    = "@pulumi/pulumi/cmd/run" // overridable with PULUMI_LANGUAGE_NODEJS_RUN_PATH
	bailExitCode = 32                       // cmd/run already showed the user an actionable message
)

func main() {
	tracing := flag.String("tracing", "", "Emit tracing to a Zipkin-compatible tracing endpoint")
	showVersion := flag.Bool("version", false, "Print the plugin version and exit")
	flag.Parse() // -v and -logtostderr are registered by the logging package (glog flags)
	if *showVersion {
		fmt.Println(hostVersion())
		return
	}
	logging.InitLogging(false, 0, false)
	cmdutil.InitTracing("pulumi-language-nodejs", "pulumi-language-nodejs", *tracing)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	cancel := make(chan bool)
	go func() { <-ctx.Done(); stop(); close(cancel) }()

	cancelCtx, cancelRuns := context.WithCancel(context.Background())
	host := &nodeHost{engineAddress: flag.Arg(0), tracing: *tracing, cancelCtx: cancelCtx, cancelRuns: cancelRuns}
	if host.engineAddress != "" {
		if err := rpcutil.Healthcheck(ctx, host.engineAddress, 5*time.Minute, stop); err != nil {
			cmdutil.Exit(fmt.Errorf("could not start health check host RPC server: %w", err))
		}
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel:  cancel,
		Init:    func(srv *grpc.Server) error { pulumirpc.RegisterLanguageRuntimeServer(srv, host); return nil },
		Options: rpcutil.TracingServerInterceptorOptions(nil),
	})
	if err != nil {
		cmdutil.Exit(fmt.Errorf("could not start language host RPC server: %w", err))
	}
	fmt.Printf("%d\n", handle.Port) // the CLI reads the port from our first line of stdout
	if err := <-handle.Done; err != nil {
		cmdutil.Exit(fmt.Errorf("language host RPC stopped serving: %w", err))
	}
}

// hostVersion is the sdk/v3 version this binary was built against (the official host reports the CLI version).
func hostVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/pulumi/pulumi/sdk/v3" {
				return strings.TrimPrefix(dep.Version, "v")
			}
		}
	}
	return "0.0.0-dev"
}

type nodeHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engineAddress string
	tracing       string
	cancelCtx     context.Context // done once the engine called Cancel
	cancelRuns    context.CancelFunc
}

func (h *nodeHost) Handshake(ctx context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.engineAddress = req.GetEngineAddress()
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *nodeHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: hostVersion()}, nil
}

func (h *nodeHost) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.cancelRuns()
	return &emptypb.Empty{}, nil
}

// options are the Pulumi.yaml `runtime.options` this host understands.
type options struct {
	typescript     bool // default true, as in the official host
	tsconfig       string
	nodeargs       string
	packagemanager npm.PackageManagerType
}

func parseOptions(raw map[string]any) (options, error) {
	opts := options{typescript: true, packagemanager: npm.AutoPackageManager}
	var ok bool
	if v, has := raw["typescript"]; has {
		if opts.typescript, ok = v.(bool); !ok {
			return opts, errors.New("typescript option must be a boolean")
		}
	}
	for key, dst := range map[string]*string{"tsconfig": &opts.tsconfig, "nodeargs": &opts.nodeargs} {
		if v, has := raw[key]; has {
			if *dst, ok = v.(string); !ok {
				return opts, fmt.Errorf("%s option must be a string", key)
			}
		}
	}
	if v, has := raw["packagemanager"]; has {
		s, isString := v.(string)
		if !isString {
			return opts, errors.New("packagemanager option must be a string")
		}
		opts.packagemanager = npm.PackageManagerType(s)
	}
	return opts, nil
}

func (h *nodeHost) GetRequiredPackages(ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{Packages: findPackages(req.GetInfo().GetProgramDirectory())}, nil
}

// findPackages walks the program directory (following symlinks once, skipping nested policy packs) and
// reports every package.json below a node_modules directory that declares `"pulumi": {"resource": true}`.
// Like the official host it reports what it could read and only logs the errors.
func findPackages(root string) []*pulumirpc.PackageDependency {
	var found []*pulumirpc.PackageDependency
	visited := map[string]bool{}
	var walk func(dir string, inNodeModules bool)
	walk = func(dir string, inNodeModules bool) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
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
				fi, err := os.Stat(path)
				isDir = err == nil && fi.IsDir()
			}
			if isDir {
				if pack, _ := workspace.DetectPolicyPackPathAt(path); pack == "" {
					walk(path, childInNodeModules)
				}
			} else if inNodeModules && entry.Name() == "package.json" {
				if dep, err := readPackage(path); err != nil {
					logging.V(3).Infof("%s: %v", path, err)
				} else if dep != nil {
					found = append(found, dep)
				}
			}
		}
	}
	walk(root, false)
	return found
}

func readPackage(path string) (*pulumirpc.PackageDependency, error) {
	var pkg struct {
		Name    string                  `json:"name"`
		Version string                  `json:"version"`
		Pulumi  plugin.PulumiPluginJSON `json:"pulumi"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &pkg)
	}
	if err != nil || !pkg.Pulumi.Resource {
		return nil, err
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

// resolveModule asks node where `mod` resolves from the program directory.
func resolveModule(ctx context.Context, nodeBin, dir, mod string) (string, error) {
	script := fmt.Sprintf("try { console.log(require.resolve(%q)); } catch (e) { console.error("+
		"e.code === 'MODULE_NOT_FOUND' ? 'It looks like the Pulumi SDK has not been installed. "+
		"Have you run pulumi install?' : e.message); process.exit(1); }", mod)
	cmd := exec.CommandContext(ctx, nodeBin, "-e", script)
	cmd.Dir = dir
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return "", errors.New(strings.TrimSpace(string(exitErr.Stderr)))
	}
	return strings.TrimSpace(string(out)), err
}

func (h *nodeHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	if h.engineAddress == "" {
		return nil, errors.New("when debugging or running explicitly, must call Handshake before Run")
	}
	fail := func(err error) (*pulumirpc.RunResponse, error) {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	if req.GetAttachDebugger() {
		return fail(errors.New("attaching a debugger is not supported by this stand-in Node.js language host"))
	}
	info := req.GetInfo()
	opts, err := parseOptions(info.GetOptions().AsMap())
	if err != nil {
		return fail(err)
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return fail(fmt.Errorf("could not find node on the $PATH: %w", err))
	}
	runPath := os.Getenv("PULUMI_LANGUAGE_NODEJS_RUN_PATH")
	if runPath == "" {
		runPath = runModule
	}
	if runPath, err = resolveModule(ctx, nodeBin, info.GetProgramDirectory(), runPath); err != nil {
		return fail(err)
	}

	if strings.ContainsAny(opts.nodeargs, `"'\`) {
		return fail(errors.New("nodeargs: quoting is not supported by this stand-in Node.js language host"))
	}
	args := append(strings.Fields(opts.nodeargs), runPath)
	flagArg := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	flagArg("monitor", req.GetMonitorAddress())
	flagArg("engine", h.engineAddress)
	flagArg("organization", req.GetOrganization())
	flagArg("project", req.GetProject())
	flagArg("root-directory", info.GetRootDirectory())
	flagArg("stack", req.GetStack())
	flagArg("pwd", info.GetProgramDirectory())
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	flagArg("parallel", strconv.Itoa(int(req.GetParallel())))
	flagArg("tracing", h.tracing)
	entryPoint := info.GetEntryPoint()
	if entryPoint == "" {
		entryPoint = "."
	}
	args = append(append(args, entryPoint), req.GetArgs()...)

	// Config keys go to cmd/run in the old `<namespace>:config:<name>` form, as the official host sends them.
	cfg := make(map[string]string, len(req.GetConfig()))
	for k, v := range req.GetConfig() {
		key, err := config.ParseKey(k)
		if err != nil {
			return fail(fmt.Errorf("failed to serialize configuration: %w", err))
		}
		cfg[key.Namespace()+":config:"+key.Name()] = v
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	cfgJSON, _ := json.Marshal(cfg)
	secretJSON, _ := json.Marshal(secretKeys)
	env := append(os.Environ(), "PULUMI_CONFIG="+string(cfgJSON), "PULUMI_CONFIG_SECRET_KEYS="+string(secretJSON))
	if opts.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}

	// Stop node (SIGINT, then SIGKILL after 5 s) when the engine calls Cancel or abandons this request.
	cmdCtx, cmdCancel := context.WithCancel(h.cancelCtx)
	defer cmdCancel()
	context.AfterFunc(ctx, cmdCancel)
	cmd := exec.CommandContext(cmdCtx, nodeBin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = env
	// Wrapped writers: node may make its stdio non-blocking, so it must not share our file descriptors.
	cmd.Stdout, cmd.Stderr = struct{ io.Writer }{os.Stdout}, struct{ io.Writer }{os.Stderr}
	logging.V(5).Infof("Language host launching process: %s", cmd)

	err = cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return &pulumirpc.RunResponse{}, nil
	case errors.As(err, &exitErr) && exitErr.ExitCode() == bailExitCode:
		return &pulumirpc.RunResponse{Bail: true}, nil
	case errors.As(err, &exitErr) && exitErr.ExitCode() > 0:
		return fail(fmt.Errorf("Program exited with non-zero exit code: %d", exitErr.ExitCode()))
	case errors.As(err, &exitErr):
		return fail(fmt.Errorf("Program exited unexpectedly: %w", exitErr))
	default:
		return fail(fmt.Errorf("Problem executing program (could not run language executor): %w", err))
	}
}

// packageManager resolves the project's package manager (the `packagemanager` option, else from lock files).
func packageManager(info *pulumirpc.ProgramInfo) (npm.PackageManager, error) {
	opts, err := parseOptions(info.GetOptions().AsMap())
	if err != nil {
		return nil, err
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
	if out, err := exec.CommandContext(ctx, nodeBin, "--version").Output(); err == nil {
		resp.Version = strings.TrimSpace(string(out))
	}
	if v, err := pm.Version(); err == nil {
		resp.Metadata["packagemanagerVersion"] = v.String()
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
