package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestShardJob: shard-job writes an Indexed Job of N pods whose container
// runs the given run command as shard $(index)/N, printing its result into
// the log, with the DSN from a Secret; running the Job's arguments as its
// pods would (the index put in, the logs put together) gives results
// ceiling merge reads from that log. Bad commands are refused in one line,
// a password before it reaches the Job.
func TestShardJob(t *testing.T) {
	ctx := context.Background()
	code, stdout, stderr := runCLI(t, ctx, "shard-job", "--shards", "2", "--image", "example/ceiling:1", "--db-secret", "bench/url",
		"--", "run", "single-inserts", "-c", "2", "-T", "1s", "--no-probe")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var job struct {
		Kind string
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int
			Parallelism    int
			BackoffLimit   *int `yaml:"backoffLimit"`
			Template       struct {
				Spec struct {
					RestartPolicy string `yaml:"restartPolicy"`
					Containers    []struct {
						Image string
						Args  []string
						Env   []struct {
							Name      string
							ValueFrom map[string]map[string]string `yaml:"valueFrom"`
						}
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal([]byte(stdout), &job); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, stdout)
	}
	s := job.Spec
	if job.Kind != "Job" || s.CompletionMode != "Indexed" || s.Completions != 2 || s.Parallelism != 2 || s.BackoffLimit == nil || *s.BackoffLimit != 0 ||
		s.Template.Spec.RestartPolicy != "Never" || len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("job %+v", job)
	}
	c := s.Template.Spec.Containers[0]
	envs := map[string]map[string]map[string]string{}
	for _, e := range c.Env {
		envs[e.Name] = e.ValueFrom
	}
	if c.Image != "example/ceiling:1" || envs[indexEnv]["fieldRef"]["fieldPath"] != "metadata.annotations['batch.kubernetes.io/job-completion-index']" ||
		envs["CEILING_DB"]["secretKeyRef"]["name"] != "bench" || envs["CEILING_DB"]["secretKeyRef"]["key"] != "url" {
		t.Fatalf("container %+v", c)
	}
	joined := strings.Join(c.Args, " ")
	if !strings.HasPrefix(joined, "run single-inserts -c 2 -T 1s --no-probe ") || !strings.Contains(joined, "--shard $("+indexEnv+")/2") || !strings.Contains(joined, "--print-result") {
		t.Fatalf("args %q", joined)
	}

	// The pods, here: the arguments with the index put in, CEILING_DB
	// from the "Secret", the two logs together.
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "k.db")
	t.Setenv("CEILING_DB", db)
	if code, _, stderr := runCLI(t, ctx, "prepare", "single-inserts"); code != 0 {
		t.Fatalf("prepare: %s", stderr)
	}
	logFile := runPods(t, ctx, c.Args, dir)
	code, stdout, stderr = runCLI(t, ctx, "merge", logFile, "--out", filepath.Join(dir, "merged.json"))
	if code != 0 {
		t.Fatalf("merge of the pods' logs: exit %d\n%s%s", code, stdout, stderr)
	}
	m := readDoc(t, filepath.Join(dir, "merged.json"))
	if m.Load.Shard == nil || m.Load.Shard.N != 2 || m.Load.Threads != 2 || m.Summary.Requests == 0 || m.Summary.Errors != 0 {
		t.Fatalf("merged: shard %+v, threads %d, %d requests, %d errors", m.Load.Shard, m.Load.Threads, m.Summary.Requests, m.Summary.Errors)
	}

	// A knee search as the pods' command: each pod prints its result
	// too, and the merged logs make the search's result.
	code, stdout, stderr = runCLI(t, ctx, "shard-job", "--shards", "2", "--image", "example/ceiling:1", "--db-secret", "bench/url",
		"--", "knee", "single-inserts", "-c", "2", "--slo", "p999<30s", "--start", "50", "--max", "100", "--step-duration", "300ms")
	if code != 0 {
		t.Fatalf("knee job: exit %d\n%s%s", code, stdout, stderr)
	}
	if err := yaml.Unmarshal([]byte(stdout), &job); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, stdout)
	}
	kdir := t.TempDir()
	logFile = runPods(t, ctx, job.Spec.Template.Spec.Containers[0].Args, kdir)
	code, stdout, stderr = runCLI(t, ctx, "merge", logFile, "--out", filepath.Join(kdir, "merged.json"))
	if code != 0 || !strings.Contains(stdout, "knee: at least 100/s") {
		t.Fatalf("merge of the knee pods' logs: exit %d\n%s%s", code, stdout, stderr)
	}
	if m := readDoc(t, filepath.Join(kdir, "merged.json")); m.Knee == nil || len(m.Steps) != 2 || m.Load.Threads != 2 {
		t.Fatalf("merged knee search: %+v, %d steps, %d threads", m.Knee, len(m.Steps), m.Load.Threads)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shards", "2", "--image", "x", "--", "run", "single-inserts", "--db", "postgres://u:hunter22@h/db"}, "holds a password"},
		{[]string{"--shards", "2", "--image", "x", "--", "run", "single-inserts"}, "no database: give --db-secret"},
		{[]string{"--shards", "2", "--image", "x", "--db-secret", "s", "--", "run", "no-such-workload"}, `unknown workload "no-such-workload"`},
		{[]string{"--shards", "2", "--image", "x", "--db-secret", "s", "--", "run", "single-inserts", "--shard", "0/2"}, "leave --shard out"},
		{[]string{"--shards", "2", "--image", "x", "--db-secret", "s", "--", "run", "single-inserts", "-c", "many"}, `invalid argument "many"`},
		{[]string{"--shards", "2", "--image", "x", "--db-secret", "s", "--", "knee", "single-inserts", "-c", "2"}, "the knee command: --slo is required"},
		{[]string{"--shards", "4", "--image", "x", "--db-secret", "s", "--", "run", "single-inserts", "-c", "3"}, "as shard 0 of 4 would run it: --shard 0/4 with -c 3: shards would have no worker"},
		{[]string{"--shards", "2", "--image", "x", "--db-secret", "s", "--", "knee", "single-inserts", "-c", "2", "--slo", "p99<5ms", "--start", "0"}, "as shard 0 of 2 would run it: --start must be above 0"},
		{[]string{"--shards", "2", "--image", "x", "--db-secret", "s", "--", "prepare", "single-inserts"}, "run WORKLOAD [flags], or knee WORKLOAD --slo SLO"},
		{[]string{"--shards", "0", "--name", "Bad_Name", "--", "run", "single-inserts"}, "--shards must be between 1 and 1000, got 0; --image is required"},
		{[]string{"--shards", "2", "--image", "x", "run", "single-inserts"}, "give the command each pod runs after --"},
	} {
		code, stdout, stderr := runCLI(t, ctx, append([]string{"shard-job"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stdout+stderr, "hunter22") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q (and no password)", tc.args, code, stderr, tc.want)
		}
	}
}

// runPods runs a Job's container arguments as its two pods would (the
// index put in, results under dir) and returns the file holding their
// logs together, as kubectl logs --prefix writes them.
func runPods(t *testing.T, ctx context.Context, podArgs []string, dir string) string {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		logs strings.Builder
	)
	for i := range 2 {
		args := append([]string{}, podArgs...)
		for k, a := range args {
			args[k] = strings.ReplaceAll(a, "$("+indexEnv+")", []string{"0", "1"}[i])
			if k > 0 && args[k-1] == "--out" {
				args[k] = filepath.Join(dir, "pod")
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, stdout, stderr := runCLI(t, ctx, args...)
			mu.Lock()
			defer mu.Unlock()
			if code != 0 {
				t.Errorf("pod %d: exit %d\n%s%s", i, code, stdout, stderr)
			}
			for _, line := range strings.Split(stdout, "\n") {
				logs.WriteString("[pod/ceiling-" + []string{"0", "1"}[i] + "-x] " + line + "\n") // kubectl logs --prefix
			}
		}()
	}
	wg.Wait()
	logFile := filepath.Join(dir, "shards.log")
	if err := os.WriteFile(logFile, []byte(logs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return logFile
}
