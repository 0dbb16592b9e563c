package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/ceiling-db/ceiling/internal/shard"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/all"
)

// shardJobFlags are the flags of `ceiling shard-job`.
type shardJobFlags struct {
	shards    int
	image     string
	name      string
	namespace string
	dbSecret  string
	cpu       string
	memory    string
	out       string
}

// The Kubernetes objects shard-job writes: only the fields it sets, in the
// order kubectl shows them.
type (
	k8sJob struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Metadata   k8sMeta `yaml:"metadata"`
		Spec       jobSpec `yaml:"spec"`
	}
	k8sMeta struct {
		Name      string            `yaml:"name,omitempty"`
		Namespace string            `yaml:"namespace,omitempty"`
		Labels    map[string]string `yaml:"labels,omitempty"`
	}
	jobSpec struct {
		CompletionMode string      `yaml:"completionMode"`
		Completions    int         `yaml:"completions"`
		Parallelism    int         `yaml:"parallelism"`
		BackoffLimit   int         `yaml:"backoffLimit"`
		Template       podTemplate `yaml:"template"`
	}
	podTemplate struct {
		Metadata k8sMeta `yaml:"metadata"`
		Spec     podSpec `yaml:"spec"`
	}
	podSpec struct {
		RestartPolicy string         `yaml:"restartPolicy"`
		Affinity      map[string]any `yaml:"affinity,omitempty"`
		Containers    []container    `yaml:"containers"`
	}
	container struct {
		Name      string         `yaml:"name"`
		Image     string         `yaml:"image"`
		Args      []string       `yaml:"args"`
		Env       []envVar       `yaml:"env"`
		Resources map[string]any `yaml:"resources,omitempty"`
	}
	envVar struct {
		Name      string         `yaml:"name"`
		ValueFrom map[string]any `yaml:"valueFrom"`
	}
)

// indexEnv is the variable the pods read their index from: declared in
// the container (from the pod's completion-index annotation), so that
// Kubernetes expands $(indexEnv) in the arguments.
const indexEnv = "CEILING_SHARD_INDEX"

var k8sName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (e *env) shardJobCmd() *cobra.Command {
	f := &shardJobFlags{}
	cmd := &cobra.Command{
		Use:   "shard-job --shards N --image IMAGE -- run|knee WORKLOAD [flags]",
		Short: "Write a Kubernetes Indexed Job that runs a test as N shards, one load generator per pod",
		Long: `shard-job writes (to stdout, or -o) a Kubernetes Indexed Job of N pods, each
running the given ceiling run (or knee) command as one shard of N (--shard
is added: the pod's completion index / N), so that N load generators on the
cluster's nodes load one database together (see run --help and knee --help,
--shard). The command is checked here as shard 0 would run it, up to where
it would connect (flag values and the split between the shards; custom's
--file is the pod's, so only its flags are parsed). The pods print their
result into their log (--print-result is added); ceiling merge reads those
logs.

The DSN goes in a Secret, never in the Job: --db-secret NAME[/KEY] (key dsn
by default) sets CEILING_DB in the pods; a --db with a password among the
run's flags is refused. The data must be prepared before the Job starts
(ceiling prepare WORKLOAD, from anywhere that reaches the database). All N
pods must run at once (parallelism N) and a failed pod is not retried
(backoffLimit 0: the shards refuse a replacement joining a run under
way). The pods prefer different nodes.`,
		Example: `  kubectl create secret generic ceiling-db --from-literal=dsn='postgres://bench:secret@db:5432/app'
  ceiling prepare inserts-deletes --rows 100000 --db "$DSN"
  ceiling shard-job --shards 4 --image ghcr.io/you/ceiling:latest --db-secret ceiling-db \
      -- run inserts-deletes --rows 100000 -c 64 -T 5m > job.yaml
  kubectl apply -f job.yaml
  kubectl wait --for=condition=complete job/ceiling --timeout=30m
  kubectl logs -l job-name=ceiling --tail=-1 --max-log-requests 4 > shards.log
  ceiling merge shards.log --out merged.json
  ceiling shard-job --shards 4 --image ghcr.io/you/ceiling:latest --db-secret ceiling-db \
      -- knee inserts-deletes --rows 100000 -c 64 --slo 'p99<20ms' > knee-job.yaml`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return usagef("give the command each pod runs after --: ceiling shard-job --shards N --image IMAGE -- run WORKLOAD [flags]")
			}
			doc, err := e.shardJob(f, args)
			if err != nil {
				return err
			}
			if f.out == "" {
				_, err = e.stdout.Write(doc)
				return err
			}
			if err := os.WriteFile(f.out, doc, 0o644); err != nil {
				return usagef("-o %s: %v", f.out, unwrapPath(err))
			}
			fmt.Fprintf(e.stdout, "job written to %s: kubectl apply -f %s\n", f.out, f.out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.shards, "shards", 0, "number of shards: pods, one load generator each (required)")
	fs.StringVar(&f.image, "image", "", "container image with the ceiling binary as its entrypoint (required)")
	fs.StringVar(&f.name, "name", "ceiling", "the Job's name (its pods' label job-name)")
	fs.StringVar(&f.namespace, "namespace", "", "the Job's namespace (default: kubectl's)")
	fs.StringVar(&f.dbSecret, "db-secret", "", "Secret NAME[/KEY] holding the DSN (key dsn by default): CEILING_DB in the pods")
	fs.StringVar(&f.cpu, "cpu", "", "each pod's CPU, requested and limit (e.g. 2): a load generator with what it needs, on a node of its own when it asks for most of one")
	fs.StringVar(&f.memory, "memory", "", "each pod's memory, requested and limit (e.g. 1Gi)")
	fs.StringVarP(&f.out, "output", "o", "", "write the Job to this file instead of stdout")
	return cmd
}

// shardJob checks the flags and the pods' command and renders the Job.
func (e *env) shardJob(f *shardJobFlags, args []string) ([]byte, error) {
	var errs []error
	if f.shards < 1 || f.shards > shard.MaxShards {
		errs = append(errs, fmt.Errorf("--shards must be between 1 and %d, got %d", shard.MaxShards, f.shards))
	}
	if strings.TrimSpace(f.image) == "" {
		errs = append(errs, fmt.Errorf("--image is required: a container image whose entrypoint is ceiling"))
	}
	if len(f.name) > 50 || !k8sName.MatchString(f.name) {
		errs = append(errs, fmt.Errorf("--name %q is not a Kubernetes name of at most 50 characters (lower-case letters, digits, '-')", f.name))
	}
	if f.namespace != "" && !k8sName.MatchString(f.namespace) {
		errs = append(errs, fmt.Errorf("--namespace %q is not a Kubernetes name", f.namespace))
	}
	secret, key, _ := strings.Cut(f.dbSecret, "/")
	if key == "" {
		key = "dsn"
	}
	if f.dbSecret != "" && !k8sName.MatchString(secret) {
		errs = append(errs, fmt.Errorf("--db-secret %q: %q is not a Secret's name", f.dbSecret, secret))
	}
	if len(errs) > 0 {
		return nil, joinUsage(errs)
	}
	if err := e.checkShardRun(args, f.dbSecret != "", f.shards); err != nil {
		return nil, err
	}
	runArgs := append(append([]string{}, args...), "--shard", "$("+indexEnv+")/"+strconv.Itoa(f.shards), "--print-result", "--out", "/tmp/ceiling-results")
	env := []envVar{{Name: indexEnv, ValueFrom: map[string]any{"fieldRef": map[string]string{"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}}
	if f.dbSecret != "" {
		env = append(env, envVar{Name: "CEILING_DB", ValueFrom: map[string]any{"secretKeyRef": map[string]string{"name": secret, "key": key}}})
	}
	c := container{Name: "ceiling", Image: f.image, Args: runArgs, Env: env}
	if f.cpu != "" || f.memory != "" {
		r := map[string]string{}
		if f.cpu != "" {
			r["cpu"] = f.cpu
		}
		if f.memory != "" {
			r["memory"] = f.memory
		}
		c.Resources = map[string]any{"requests": r, "limits": r}
	}
	labels := map[string]string{"app.kubernetes.io/name": "ceiling", "app.kubernetes.io/component": "load-generator"}
	job := k8sJob{
		APIVersion: "batch/v1", Kind: "Job",
		Metadata: k8sMeta{Name: f.name, Namespace: f.namespace, Labels: labels},
		Spec: jobSpec{
			CompletionMode: "Indexed", Completions: f.shards, Parallelism: f.shards, BackoffLimit: 0,
			Template: podTemplate{
				Metadata: k8sMeta{Labels: labels},
				Spec: podSpec{
					RestartPolicy: "Never",
					// One load generator per node where the cluster can.
					Affinity: map[string]any{"podAntiAffinity": map[string]any{
						"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
							"weight": 100,
							"podAffinityTerm": map[string]any{
								"topologyKey":   "kubernetes.io/hostname",
								"labelSelector": map[string]any{"matchLabels": map[string]string{"job-name": f.name}},
							},
						}},
					}},
					Containers: []container{c},
				},
			},
		},
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# ceiling %s: %d shards of `ceiling %s`\n", version(), f.shards, strings.Join(args, " "))
	fmt.Fprintf(&b, "# prepare the data first; then: kubectl apply -f THIS; kubectl wait --for=condition=complete job/%s --timeout=…\n", f.name)
	fmt.Fprintf(&b, "# kubectl logs -l job-name=%s --tail=-1 --max-log-requests %d > shards.log; ceiling merge shards.log\n", f.name, max(f.shards, 5))
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(job); err != nil {
		return nil, fmt.Errorf("render the job: %w", err)
	}
	return b.Bytes(), nil
}

// checkShardRun checks the command the pods will run (run or knee), as
// it would parse it (a fresh command tree, nothing run): a workload that
// can be sharded, without the flags shard-job sets, and without a
// password in the Job.
func (e *env) checkShardRun(args []string, secret bool, shards int) error {
	if len(args) < 2 || (args[0] != "run" && args[0] != "knee") {
		return usagef("after -- give the command each pod runs: run WORKLOAD [flags], or knee WORKLOAD --slo SLO [flags]")
	}
	name := args[1]
	meta, err := all.Registry().Lookup(name)
	if err != nil {
		return &UsageError{Err: err}
	}
	if _, ok := meta.New().(workload.Sharder); !ok {
		return usagef("%s cannot run sharded yet (these can: %s)", name, shardable())
	}
	probe := &env{stdout: e.stdout, stderr: e.stderr, getenv: func(string) string { return "" }}
	cmd := probe.runWorkloadCmd(name)
	if args[0] == "knee" {
		cmd = probe.kneeWorkloadCmd(name)
	}
	fs := cmd.Flags()
	if err := fs.Parse(args[2:]); err != nil {
		return usagef("the %s command: %v", args[0], err)
	}
	if err := phaseFlags(fs, args[0]); err != nil {
		return err
	}
	if args[0] == "knee" && !fs.Changed("slo") {
		return usagef("the knee command: --slo is required, e.g. --slo 'p99<50ms,late<1%%'")
	}
	for _, fl := range []string{"shard", "print-result", "out"} {
		if fs.Changed(fl) {
			return usagef("leave --%s out of the %s command: shard-job sets it", fl, args[0])
		}
	}
	if fs.NArg() > 0 {
		return usagef("the %s command: unexpected argument %q", args[0], fs.Arg(0))
	}
	db, _ := fs.GetString("db")
	switch {
	case db != "" && target.HasPassword(db):
		return usagef("the %s command's --db holds a password, which would be written into the Job: put the DSN in a Secret and give --db-secret", args[0])
	case db == "" && !secret:
		return usagef("no database: give --db-secret NAME (a Secret holding the DSN), or --db in the %s command when it needs no password", args[0])
	case db != "" && secret:
		return usagef("--db in the %s command and --db-secret: give one", args[0])
	}
	if name == "custom" { // its --file is read in the pod, from the image's file system
		return nil
	}
	// The command as shard 0 of the Job would run it, stopped once its
	// flags are checked: the values (-c 0, -c below the shards, a bad
	// --rates) fail here rather than in every pod.
	check := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }, checkOnly: true}
	cmd = check.runWorkloadCmd(name)
	if args[0] == "knee" {
		cmd = check.kneeWorkloadCmd(name)
	}
	cmd.SetArgs(append(append([]string{}, args[2:]...), "--shard", fmt.Sprintf("0/%d", shards)))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		return usagef("the %s command, as shard 0 of %d would run it: %v", args[0], shards, err)
	}
	return nil
}
