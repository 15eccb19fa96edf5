// Command pulumi-language-nodejs is a stand-in for Pulumi's official Node.js language host.
//
// The official host lives in the module github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3,
// which the Go module proxy available to this project does not serve, so the test tooling builds this one
// instead. It is written against the LanguageRuntime gRPC service of github.com/pulumi/pulumi/sdk/v3 and
// follows the official host of the pinned version (v3.259.0, sdk/nodejs/cmd/pulumi-language-nodejs/main.go)
// wherever a program can tell the difference (run.go):
//
//   - node starts in the language host's own working directory, which the engine sets to the program
//     directory (Pulumi.yaml's directory, or the directory `main` names), with `nodeargs` split as a
//     shell would (github.com/google/shlex, as upstream), then @pulumi/pulumi/cmd/run resolved from the
//     program directory and `--monitor … --engine … --organization … --project … --root-directory …
//     --stack … --pwd <program directory> [--dry-run] --parallel N [--tracing …] <entry point> [args…]`;
//   - its environment is ours plus PULUMI_CONFIG (keys in the old `<namespace>:config:<name>` form),
//     PULUMI_CONFIG_SECRET_KEYS, PULUMI_NODEJS_TYPESCRIPT=true unless `typescript: false`, and
//     PULUMI_NODEJS_TSCONFIG_PATH when `tsconfig` is set;
//   - the engine's Cancel, or the engine abandoning Run, sends node SIGINT and kills it 5 s later;
//   - exit code 32 is a bail (cmd/run already told the user), any other failure is "Program exited with
//     non-zero exit code: N" (-1 when a signal ended it), with the out-of-memory hint when node's stderr
//     shows V8 running out of heap.
//
// About answers what the official host answers, but remembers node's and the package manager's versions
// per executable and reads TypeScript's package.json itself instead of starting a process for each
// (probes.go): the engine asks on every `up` and `preview`, and those processes were most of the host's cost.
//
// What it does not do, all listed in README.md: it hands node the engine's resource monitor address
// itself rather than a forwarding proxy, and passes no --sync directory (@pulumi/pulumi 3.270 defines a
// reader for it, tryGetSyncInvokes, but never calls it); the bun runtime, attaching a debugger, OpenTelemetry trace propagation,
// `--use-language-version-tools` (fnm), RunPlugin, code generation, Pack, Link and the template and
// prompt RPCs are not implemented (they answer Unimplemented, or an error naming this host).
//
// Startup follows the plugin protocol of the Pulumi CLI: optional flags (--tracing, and the -v/--logtostderr
// logging flags), then the engine address as the last positional argument; the chosen port is printed on
// stdout, and the host stops on SIGINT or when the engine stops answering health checks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func main() {
	tracing := flag.String("tracing", "", "Emit tracing to a Zipkin-compatible tracing endpoint")
	runtimeName := flag.String("runtime", "nodejs", "The runtime for TypeScript programs; only nodejs here")
	showVersion := flag.Bool("version", false, "Print the plugin version and exit")
	flag.Parse() // -v and -logtostderr are registered by the logging package (glog flags)
	if *showVersion {
		fmt.Println(hostVersion())
		return
	}
	logging.InitLogging(false, 0, false)
	cmdutil.InitTracing("pulumi-language-nodejs", "pulumi-language-nodejs", *tracing)
	if *runtimeName != "nodejs" {
		cmdutil.Exit(fmt.Errorf("unsupported runtime: %s (this stand-in Node.js language host runs only nodejs)",
			*runtimeName))
	}

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

// hostVersion is the sdk/v3 version this binary was built against (the official host reports the CLI
// version; both are the pinned version here).
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

// Handshake is how an engine that did not start us (an attached host) introduces itself; like the official
// host we then watch that engine's health and stop when it goes away.
func (h *nodeHost) Handshake(ctx context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.engineAddress = req.GetEngineAddress()
	watch, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	if err := rpcutil.Healthcheck(watch, h.engineAddress, 5*time.Minute, stop); err != nil {
		return nil, fmt.Errorf("could not start health check host RPC server: %w", err)
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *nodeHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: hostVersion()}, nil
}

func (h *nodeHost) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.cancelRuns()
	return &emptypb.Empty{}, nil
}

// options are the Pulumi.yaml `runtime.options` of the official host, checked with its messages.
type options struct {
	typescript     bool // default true
	tsconfig       string
	nodeargs       string
	packagemanager npm.PackageManagerType
	production     bool // install without devDependencies
}

func parseOptions(raw map[string]any) (options, error) {
	opts := options{typescript: true, packagemanager: npm.AutoPackageManager}
	var ok bool
	if v, has := raw["typescript"]; has {
		if opts.typescript, ok = v.(bool); !ok {
			return opts, errors.New("typescript option must be a boolean")
		}
	}
	if v, has := raw["tsconfig"]; has {
		if opts.tsconfig, ok = v.(string); !ok {
			return opts, errors.New("tsconfigpath option must be a string") // sic: upstream's wording
		}
	}
	if v, has := raw["nodeargs"]; has {
		if opts.nodeargs, ok = v.(string); !ok {
			return opts, errors.New("nodeargs option must be a string")
		}
	}
	if v, has := raw["production"]; has {
		if opts.production, ok = v.(bool); !ok {
			return opts, errors.New("production option must be a boolean")
		}
	}
	if v, has := raw["packagemanager"]; has {
		pm, isString := v.(string)
		if !isString {
			return opts, errors.New("packagemanager option must be a string")
		}
		switch npm.PackageManagerType(pm) {
		case npm.AutoPackageManager, npm.NpmPackageManager, npm.YarnPackageManager, npm.PnpmPackageManager,
			npm.BunPackageManager:
			opts.packagemanager = npm.PackageManagerType(pm)
		default:
			return opts, fmt.Errorf("packagemanager option must be one of auto, npm, yarn, pnpm or bun, got %q", pm)
		}
	}
	return opts, nil
}
