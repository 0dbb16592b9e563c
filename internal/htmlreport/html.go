package htmlreport

import (
	"fmt"
	"html/template"
	"io"
)

// Render writes d as one self-contained HTML page.
func Render(w io.Writer, d *Doc) error {
	if err := page.Execute(w, d); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

// Write builds the report of ins and renders it to w.
func Write(w io.Writer, ins []Input) error {
	d, err := Build(ins)
	if err != nil {
		return err
	}
	return Render(w, d)
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"cls":     func(t *Table, i, j int) string { return t.cellClass(i, j) },
	"hasHead": func(t *Table) bool { return t.hasHead() },
}).Parse(pageHTML))

// style is the page's CSS: readable on a laptop, light and dark (the
// charts keep a light card in dark mode, inverted by a filter so their
// colours stay apart), and clean on paper.
const style = `
:root{--fg:#1b1f24;--muted:#5a6270;--bg:#ffffff;--card:#f6f8fa;--line:#d0d7de;--accent:#0b61a4;--bad:#b3261e;--good:#1a7f37;--chart:#ffffff}
@media (prefers-color-scheme:dark){
:root{--fg:#e6e8eb;--muted:#a0a8b4;--bg:#15181c;--card:#1f242a;--line:#3a424c;--accent:#6cb6ff;--bad:#ff8a80;--good:#7ee787;--chart:#1a1a1a}
svg.chart{filter:invert(0.9) hue-rotate(180deg)}
}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif}
main{max-width:1080px;margin:0 auto;padding:24px 20px 60px}
h1{font-size:1.6em;margin:0 0 4px}
h2{font-size:1.3em;margin:36px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:1.1em;margin:26px 0 8px}
.sub{color:var(--muted);margin:0 0 8px}
.glance{font-size:1.1em;font-weight:600;margin:0 0 12px}
nav{font-size:.9em;color:var(--muted);margin:8px 0 18px}
nav a{color:var(--accent);text-decoration:none;margin-right:12px;white-space:nowrap}
.verdict{border-left:4px solid var(--accent);background:var(--card);padding:10px 14px;margin:10px 0;border-radius:4px}
.verdict .bn{font-size:1.35em;font-weight:600}
.verdict ul{margin:6px 0 0;padding-left:20px}
.verdict .try{color:var(--good)}
.verdict .check{font-weight:600}
.tw{overflow-x:auto;margin:10px 0}
table{border-collapse:collapse;font-size:.88em;font-variant-numeric:tabular-nums}
caption{text-align:left;color:var(--muted);padding:0 0 4px;caption-side:top}
th,td{padding:3px 9px;border-bottom:1px solid var(--line);vertical-align:top}
td{white-space:nowrap}
td.l{white-space:normal}
th{text-align:right;font-weight:600;background:var(--card)}
td{text-align:right}
th:first-child,td:first-child,th.l,td.l{text-align:left}
td.beyond{font-weight:600}
td.better{color:var(--good);font-weight:600}
td.worse{color:var(--bad);font-weight:600}
td.within{color:var(--muted)}
td.sat{color:var(--bad)}
figure{max-width:880px;margin:14px 0;padding:8px;background:var(--chart);border:1px solid var(--line);border-radius:6px;page-break-inside:avoid;break-inside:avoid}
figure svg.chart{display:block;width:100%;height:auto}
figcaption{font-size:.85em;color:var(--muted);padding:4px 4px 0}
.note{color:var(--muted);font-size:.9em;margin:6px 0}
details{margin:6px 0}summary{cursor:pointer;color:var(--muted)}
pre{overflow-x:auto;font-size:.85em;padding:8px;border:1px solid var(--line);border-radius:4px;background:var(--card)}
footer{color:var(--muted);font-size:.85em;margin-top:40px}
@media print{
body{font-size:10.5pt;background:#fff;color:#000}
main{max-width:none;padding:0}
nav{display:none}
svg.chart{filter:none!important}
figure{background:#fff!important}
h2{break-before:auto;break-after:avoid}
h3{break-after:avoid}
figure{border:none;padding:0}
.tw{overflow:visible}
table{font-size:8.5pt}
}
`

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.Title}}</title>
<style>` + style + `</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p class="sub">{{.Subtitle}}</p>
{{if .Glance}}<p class="glance">{{.Glance}}</p>{{end}}
<nav>{{range .Sections}}{{if not .Sub}}<a href="#{{.ID}}">{{.Title}}</a> {{end}}{{end}}</nav>
{{range .Sections}}
<section id="{{.ID}}">
{{if .Sub}}<h3>{{.Title}}</h3>{{else}}<h2>{{.Title}}</h2>{{end}}
{{range .Blocks}}{{template "block" .}}{{end}}
</section>
{{end}}
<footer>Written by ceiling report. Every figure comes from the result files; n/a marks a figure that was not measured.</footer>
</main>
</body>
</html>
{{define "block"}}
{{- if .Para}}<p>{{.Para}}</p>
{{else if .Verdict}}<div class="verdict">
<div class="bn">{{.Verdict.Headline}}</div>
{{if .Verdict.Evidence}}<ul>{{range .Verdict.Evidence}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Verdict.Suggestions}}<ul>{{range .Verdict.Suggestions}}<li class="try">{{.}}</li>{{end}}</ul>{{end}}
{{if .Verdict.Checks}}<ul>{{range .Verdict.Checks}}<li class="check">{{.}}</li>{{end}}</ul>{{end}}
</div>
{{else if .List}}<ul>{{range .List}}<li>{{.}}</li>{{end}}</ul>
{{else if .Table}}{{$t := .Table}}<div class="tw"><table>
{{if $t.Caption}}<caption>{{$t.Caption}}</caption>{{end}}
{{if hasHead $t}}<thead><tr>{{range $j, $h := $t.Head}}<th{{with cls $t -1 $j}} class="{{.}}"{{end}}>{{$h}}</th>{{end}}</tr></thead>{{end}}
<tbody>
{{range $i, $r := $t.Rows}}<tr>{{range $j, $c := $r}}<td{{with cls $t $i $j}} class="{{.}}"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{else if .Chart}}<figure>
{{.Chart.SVG}}
{{if .Chart.Note}}<figcaption>{{.Chart.Note}}</figcaption>{{end}}
</figure>
{{else if .Note}}<p class="note">{{.Note}}</p>
{{else if .Pre}}<details><summary>{{.PreTitle}}</summary><pre>{{.Pre}}</pre></details>
{{end}}
{{- end}}
`
