package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ceiling-db/ceiling/internal/knee"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/shard"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// A sharded knee search (knee --shard I/N): every probe is one round. The
// shards meet before it (each round under a key of its own) and start
// together at 1/N of the rate each; after it, each posts its figures and
// latency histogram to the others (shard.Meeting.Exchange), and every
// shard judges the probe by the sum of them, so that all take the same
// next rate. A shard that fails or is interrupted says so in its post,
// and the others stop too.

// probeWord is what a shard tells the others of its part of a probe.
type probeWord struct {
	Rate      float64 `json:"rate"` // the shard's part of the probe's rate
	Achieved  float64 `json:"achieved"`
	Scheduled int64   `json:"scheduled"`
	Completed int64   `json:"completed"`
	Late      int64   `json:"late"`
	Failed    int64   `json:"failed"`
	Hist      string  `json:"hist,omitempty"` // completed requests' latency (metrics.EncodeHist)
	// Ops are each operation's completed requests and latency, for the
	// SLO terms that name one.
	Ops     map[string]opWord `json:"ops,omitempty"`
	Partial bool              `json:"partial,omitempty"`
	Err     string            `json:"error,omitempty"`
}

// opWord is one operation's part of a shard's probe.
type opWord struct {
	Completed int64  `json:"completed"`
	Hist      string `json:"hist,omitempty"`
}

// wordOf is what the shard says of its part of a probe: its figures, or
// that it stopped and why.
func wordOf(res *runner.Result, err error) probeWord {
	switch {
	case err != nil:
		return probeWord{Err: oneLine(err.Error())}
	case res == nil || len(res.Steps) == 0:
		return probeWord{Partial: true}
	}
	st := res.Steps[0]
	w := probeWord{Rate: st.Rate, Achieved: st.Achieved, Scheduled: st.Scheduled, Completed: st.Completed, Late: st.Late, Failed: st.Failed, Partial: st.Partial || res.Partial}
	if st.Snap != nil {
		if enc, err := metrics.EncodeHist(st.Snap.Total().Hist); err == nil {
			w.Hist = enc
		} else {
			w.Err = oneLine(err.Error())
		}
		w.Ops = make(map[string]opWord, len(st.Snap.Ops))
		for _, o := range st.Snap.Ops {
			ow := opWord{Completed: o.Requests}
			if o.Hist != nil && o.Hist.TotalCount() > 0 {
				enc, err := metrics.EncodeHist(o.Hist)
				if err != nil {
					w.Err = oneLine(err.Error())
				}
				ow.Hist = enc
			}
			w.Ops[o.Name] = ow
		}
	}
	return w
}

// kneeKey names the search the shards make together (--shard-key,
// else its workload, parameters and search flags).
func (sf *shardFlags) kneeKey(name string, w workload.Workload, f *kneeFlags) string {
	return sf.keyOf(name, "knee", w, fmt.Sprintf("%d %q %g %g %v %v %q %d %s %v %s", sf.total, f.slo, f.start, f.max, f.stepDur, f.stepWarmup, f.precision, f.retries, f.open.arrival, f.open.lateAfter, f.durability))
}

// shardProbe runs this shard's part of round r of the search, a probe at
// rate (the whole search's) for dur, and returns the figures of all the shards'
// requests together. partial is true when a shard was interrupted: the
// search stops.
func (e *env) shardProbe(ctx context.Context, t target.Target, w workload.Workload, f *kneeFlags, cfg runner.Config, key string, r int, rate float64, dur time.Duration) (res *runner.Result, fig knee.Figures, partial bool, err error) {
	sf := &f.shard
	n := float64(sf.s.N)
	pc := cfg
	pc.Steps = []runner.Step{{Rate: rate / n, Duration: dur, Warmup: f.stepWarmup}}
	pc.BeforeStart = sf.beforeStart(e, t, shard.RoundKey(key, r), pc)
	res, runErr := runner.Run(ctx, pc, t, w)
	m := sf.meeting
	if m == nil { // the shards did not meet: nothing to tell
		return res, knee.Figures{}, false, runErr
	}
	defer sf.leave()
	mine := wordOf(res, runErr)
	if runErr != nil && ctx.Err() != nil {
		mine = probeWord{Partial: true} // interrupted: the others stop too
	}
	body, _ := json.Marshal(mine)
	if mine.Err != "" || mine.Partial {
		// Tell the others, who are waiting for this shard's figures.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = m.Post(pctx, key, r, body)
		switch {
		case mine.Partial:
			return res, knee.Figures{}, true, nil
		case runErr == nil:
			runErr = errors.New(mine.Err)
		}
		return res, knee.Figures{}, false, runErr
	}
	all, err := m.Exchange(ctx, key, r, body, sf.wait, e.stdout)
	if err != nil {
		if ctx.Err() != nil {
			return res, knee.Figures{}, true, nil
		}
		return res, knee.Figures{}, false, err
	}
	fig, partial, err = judgeRound(all, sf.s.I, rate)
	if partial {
		fmt.Fprintf(e.stdout, "shard %s: another shard was interrupted during probe %d: the search stops\n", sf.s, r)
	}
	return res, fig, partial, err
}

// judgeRound adds up the shards' posts of a probe at rate into the
// figures of the whole probe: counts and rates added, latency from the
// merged histograms. A shard that failed makes it an error, one that was
// interrupted a partial probe; shards that probed different rates (their
// searches went apart) an error.
func judgeRound(posts [][]byte, self int, rate float64) (knee.Figures, bool, error) {
	words := make([]probeWord, len(posts))
	for i, b := range posts {
		if err := json.Unmarshal(b, &words[i]); err != nil {
			return knee.Figures{}, false, fmt.Errorf("shard %d's figures: %w", i, err)
		}
	}
	fig := knee.Figures{Rate: rate, ByOp: map[string]knee.OpFigures{}}
	partial := false
	var all []string
	opEncs := map[string][]string{}
	for i, w := range words {
		switch {
		case w.Err != "":
			return knee.Figures{}, false, fmt.Errorf("shard %d stopped: %s", i, w.Err)
		case w.Partial:
			partial = true
			continue
		case math.Abs(w.Rate-words[self].Rate) > 1e-9*rate:
			return knee.Figures{}, false, fmt.Errorf("shard %d probed %g requests/s, this shard %g: the shards' searches went apart (give every shard the same flags and ceiling version)", i, w.Rate, words[self].Rate)
		}
		fig.Achieved += w.Achieved
		fig.Scheduled += w.Scheduled
		fig.Completed += w.Completed
		fig.Late += w.Late
		fig.Failed += w.Failed
		all = append(all, w.Hist)
		for name, o := range w.Ops {
			of := fig.ByOp[name]
			of.Completed += o.Completed
			fig.ByOp[name] = of
			opEncs[name] = append(opEncs[name], o.Hist)
		}
	}
	h, err := metrics.MergeHists(all)
	if err != nil {
		return knee.Figures{}, false, fmt.Errorf("the shards' latency: %w", err)
	}
	fig.Latency = metrics.LatencyOf(h)
	for name, encs := range opEncs {
		h, err := metrics.MergeHists(encs)
		if err != nil {
			return knee.Figures{}, false, fmt.Errorf("the shards' latency of %s: %w", name, err)
		}
		of := fig.ByOp[name]
		of.Latency = metrics.LatencyOf(h)
		fig.ByOp[name] = of
	}
	return fig, partial, nil
}
