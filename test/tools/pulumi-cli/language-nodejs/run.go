// Run: how a program is launched, and how its end is reported, as the official host does (Run,
// execRuntime, constructArguments, constructConfig, oomSniffer in its main.go).

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/google/shlex"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const (
	runModule    = "@pulumi/pulumi/cmd/run" // overridable with PULUMI_LANGUAGE_NODEJS_RUN_PATH
	bailExitCode = 32                       // cmd/run already showed the user an actionable message
)

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
		return "", errors.New(string(exitErr.Stderr))
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
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return fail(fmt.Errorf("could not find node on the $PATH: %w", err))
	}
	runPath := os.Getenv("PULUMI_LANGUAGE_NODEJS_RUN_PATH")
	if runPath == "" {
		runPath = runModule
	}
	info := req.GetInfo()
	if runPath, err = resolveModule(ctx, nodeBin, info.GetProgramDirectory(), runPath); err != nil {
		return fail(err)
	}
	cfg, err := configJSON(req.GetConfig())
	if err != nil {
		return fail(fmt.Errorf("failed to serialize configuration: %w", err))
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretJSON, _ := json.Marshal(secretKeys)
	env := append(os.Environ(), "PULUMI_CONFIG="+cfg, "PULUMI_CONFIG_SECRET_KEYS="+string(secretJSON))
	opts, err := parseOptions(info.GetOptions().AsMap())
	if err != nil {
		return fail(err)
	}
	if opts.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}
	args, err := shlex.Split(opts.nodeargs)
	if err != nil {
		return fail(err)
	}
	if req.GetAttachDebugger() {
		return fail(errors.New("attaching a debugger is not supported by this stand-in Node.js language host"))
	}
	args = append(args, h.runArguments(req, runPath)...)
	return h.runNode(ctx, nodeBin, args, env), nil
}

// runArguments are cmd/run's arguments (upstream's constructArguments, less --sync).
func (h *nodeHost) runArguments(req *pulumirpc.RunRequest, runPath string) []string {
	args := []string{runPath}
	flagArg := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	flagArg("monitor", req.GetMonitorAddress())
	flagArg("engine", h.engineAddress)
	flagArg("organization", req.GetOrganization())
	flagArg("project", req.GetProject())
	flagArg("root-directory", req.GetInfo().GetRootDirectory())
	flagArg("stack", req.GetStack())
	flagArg("pwd", req.GetInfo().GetProgramDirectory())
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	flagArg("parallel", strconv.Itoa(int(req.GetParallel())))
	flagArg("tracing", h.tracing)
	// The engine always names an entry point, "." for the program directory.
	args = append(args, req.GetInfo().GetEntryPoint())
	return append(args, req.GetArgs()...)
}

// configJSON sends config keys to cmd/run in the old `<namespace>:config:<name>` form, as upstream does so
// that older SDKs still read them.
func configJSON(raw map[string]string) (string, error) {
	cfg := make(map[string]string, len(raw))
	for k, v := range raw {
		key, err := config.ParseKey(k)
		if err != nil {
			return "", err
		}
		cfg[key.Namespace()+":config:"+key.Name()] = v
	}
	b, err := json.Marshal(cfg)
	return string(b), err
}

// runNode runs node in our own working directory (the engine starts us in the program directory) and
// reports its end as upstream does.
func (h *nodeHost) runNode(ctx context.Context, nodeBin string, args, env []string) *pulumirpc.RunResponse {
	// Stop node (SIGINT, then SIGKILL after 5 s) when the engine calls Cancel or abandons this request.
	cmdCtx, cmdCancel := context.WithCancel(h.cancelCtx)
	defer cmdCancel()
	context.AfterFunc(ctx, cmdCancel)
	cmd := exec.CommandContext(cmdCtx, nodeBin, args...)
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = env
	// A wrapped writer: node may make its stdio non-blocking, so it must not share our file descriptor.
	cmd.Stdout = struct{ io.Writer }{os.Stdout}
	r, w := io.Pipe()
	cmd.Stderr = w
	sniffer := newOOMSniffer()
	sniffer.scan(io.TeeReader(r, os.Stderr))
	logging.V(5).Infof("Language host launching process: %s", cmd)

	err := cmd.Run()
	if err == nil {
		_ = w.Close()
		return &pulumirpc.RunResponse{}
	}
	// node does not flush process.stdout/stderr writes before exiting: make sure the engine sees them.
	_ = os.Stdout.Sync()
	_ = os.Stderr.Sync()
	_ = w.Close()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		err = fmt.Errorf("Problem executing program (could not run language executor): %w", err)
		return &pulumirpc.RunResponse{Error: err.Error()}
	}
	switch code := exitErr.ExitCode(); code { // -1 when a signal ended node
	case 0:
		err = fmt.Errorf("Program exited unexpectedly: %w", exitErr)
	case bailExitCode:
		return &pulumirpc.RunResponse{Bail: true}
	default:
		err = fmt.Errorf("Program exited with non-zero exit code: %d", code)
		sniffer.wait()
		if sniffer.detected {
			err = fmt.Errorf("Program exited with non-zero exit code: %d. %s", code, oomMessage)
		}
	}
	return &pulumirpc.RunResponse{Error: err.Error()}
}

const oomMessage = "Detected a possible out of memory error. Consider increasing the memory available to the " +
	"nodejs process by setting the `nodeargs` runtime option in Pulumi.yaml to " +
	"`nodeargs: --max-old-space-size=<size>` where `<size>` is the maximum memory in megabytes that can be " +
	"allocated to nodejs. See https://www.pulumi.com/docs/concepts/projects/project-file/#runtime-options"

// oomSniffer watches node's stderr for V8's out-of-memory report, as upstream's does.
type oomSniffer struct {
	detected bool
	done     chan struct{}
}

func newOOMSniffer() *oomSniffer { return &oomSniffer{done: make(chan struct{})} }

func (o *oomSniffer) scan(r io.Reader) {
	go func() {
		scanner := bufio.NewScanner(r)
		for scanner.Scan() {
			line := scanner.Text()
			if !o.detected && (strings.Contains(line, "<--- Last few GCs --->") ||
				// With the debugger API hooked, an assertion can hide the OOM report (pulumi/pulumi#16596).
				strings.Contains(line, "Check failed: needs_context && current_scope_ == closure_scope_")) {
				o.detected = true
				close(o.done)
			}
		}
		if !o.detected {
			close(o.done)
		}
		_, _ = io.Copy(io.Discard, r) // a line too long for the scanner must not block node's stderr
	}()
}

// wait returns once the sniffer saw the report or read all of stderr (upstream also gives up after 15 s).
func (o *oomSniffer) wait() {
	select {
	case <-o.done:
	case <-time.After(15 * time.Second):
	}
}
