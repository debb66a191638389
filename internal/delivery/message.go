package delivery

import (
	"bytes"
	"fmt"
	"html/template"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/report"
)

// words are a message's fixed texts per locale.
var words = map[string]map[string]string{
	"id": {
		"subject":      "Laporan %s per %s",
		"stale_tag":    "[DATA BELUM TERBARU] ",
		"late_tag":     " (terlambat)",
		"resent_tag":   " (dikirim ulang)",
		"again_tag":    " (dikirim lagi)",
		"test_tag":     "[UJI] ",
		"test":         "Ini pesan uji (report deliver %s -as-of %s -test-to %s), hanya untuk alamat itu. Penerima sebenarnya (%s) belum menerimanya, dan pengiriman ini tidak dihitung.",
		"intro":        "Laporan pengiriman %q per %s (akhir hari, %s).",
		"sync":         "Data dari sinkronisasi %d (%s), selesai %s: %s sebelum pesan ini dibuat.",
		"sync_none":    "Basis data billsync belum berisi sinkronisasi.",
		"stale":        "PERHATIAN: angka-angka ini mungkin belum mencerminkan %s. Alasan: %s.",
		"stale_status": "sinkronisasi terakhir akun %s (sinkronisasi %d) %s",
		"stale_before": "tidak ada sinkronisasi akun %s yang selesai setelah %s",
		"stale_today":  "tidak ada sinkronisasi akun %s yang selesai sejak %s (max_age %s)",
		"stale_none":   "basis data billsync belum berisi sinkronisasi",
		"stale_failed": "sinkronisasi terakhir gagal pada %s (%s); basis data billsync masih dari sinkronisasi sebelumnya",
		"late":         "Pesan ini terlambat: jadwalnya %s.",
		"resent":       "Pesan ini dikirim ulang: pengiriman sebelumnya terputus sebelum tercatat, jadi mungkin Anda sudah menerimanya.",
		"again":        "Pesan ini dikirim lagi atas permintaan (report deliver %s -as-of %s -again).",
		"headline":     "Angka utama",
		"checks":       "Pemeriksaan",
		"sheets":       "Lembar",
		"warnings":     "Peringatan",
		"runs":         "Sinkronisasi",
		"ok":           "OK",
		"bad":          "PERIKSA",
		"attached":     "Terlampir (%d berkas, %s):",
		"not_attached": "Berkas tidak dilampirkan: ukurannya %s, di atas batas %s. Berkas ada di server billsync, di %s:",
		"footer":       "Dikirim oleh billsync. Pengiriman %q, per %s, Message-ID %s.",
		"none":         "tidak ada",
	},
	"en": {
		"subject":      "%s reports as of %s",
		"stale_tag":    "[STALE DATA] ",
		"late_tag":     " (late)",
		"resent_tag":   " (dikirim ulang / resent)",
		"again_tag":    " (sent again)",
		"test_tag":     "[TEST] ",
		"test":         "This is a test (report deliver %s -as-of %s -test-to %s), for that address only. Its recipients (%s) have not been sent it, and this send does not count.",
		"intro":        "The reports of delivery %q as of %s (end of day, %s).",
		"sync":         "Figures from sync run %d (%s), finished %s: %s before this message was made.",
		"sync_none":    "The warehouse holds no sync yet.",
		"stale":        "ATTENTION: these figures may not reflect %s. Why: %s.",
		"stale_status": "the last sync of account %s (run %d) %s",
		"stale_before": "no sync of account %s finished after %s",
		"stale_today":  "no sync of account %s finished since %s (max_age %s)",
		"stale_none":   "the warehouse holds no sync yet",
		"stale_failed": "the last sync failed at %s (%s); the warehouse is still the sync before it",
		"late":         "This message is late: it was due %s.",
		"resent":       "This message is sent again: the previous send was interrupted before it was recorded, so you may have it already.",
		"again":        "This message is sent again on request (report deliver %s -as-of %s -again).",
		"headline":     "Headline figures",
		"checks":       "Checks",
		"sheets":       "Sheets",
		"warnings":     "Warnings",
		"runs":         "Sync runs",
		"ok":           "OK",
		"bad":          "CHECK",
		"attached":     "Attached (%d files, %s):",
		"not_attached": "The files are not attached: they are %s, above the limit of %s. They are on the billsync server, in %s:",
		"footer":       "Sent by billsync. Delivery %q, as of %s, Message-ID %s.",
		"none":         "none",
	},
}

func texts(locale string) map[string]string {
	if t, ok := words[locale]; ok {
		return t
	}
	return words["id"]
}

// message is what an occurrence says, before it becomes MIME.
type message struct {
	Subject, Text, HTML string
}

// content is everything the message says.
type content struct {
	d          *Delivery
	asOf       time.Time
	loc        *time.Location
	now        time.Time
	fresh      Freshness
	scheduled  time.Time // zero unless late
	late       bool
	kind       string   // scheduled, manual, again, resend, test
	recipients []string // the delivery's own To and Cc (a test goes elsewhere)
	digests    []report.Digest
	files      []fileInfo
	attached   bool
	dir        string
	totalBytes int64
	messageID  string
}

// compose writes the subject and the two bodies in the delivery's locale.
func compose(c content) (message, error) {
	t := texts(c.d.Locale)
	date := report.Date(c.asOf, c.d.Locale)
	subject := fmt.Sprintf(t["subject"], c.d.Name, date)
	if c.fresh.Stale != "" {
		subject = t["stale_tag"] + subject
	}
	if c.late {
		subject += t["late_tag"]
	}
	switch c.kind {
	case "resend":
		subject += t["resent_tag"]
	case "again":
		subject += t["again_tag"]
	case "test":
		subject = t["test_tag"] + subject
	}
	v := view{Subject: subject, T: t}
	v.Intro = fmt.Sprintf(t["intro"], c.d.Name, date, c.loc.String())
	if c.fresh.Run > 0 {
		fin := t["none"]
		if !c.fresh.Finished.IsZero() {
			fin = report.DateTime(c.fresh.Finished, c.d.Locale, c.loc)
		}
		v.Sync = fmt.Sprintf(t["sync"], c.fresh.Run, codeWord(c.fresh.Status, c.d.Locale), fin, age(c.fresh.Age(c.now), c.d.Locale))
	} else {
		v.Sync = t["sync_none"]
	}
	if c.fresh.Stale != "" {
		v.Stale = fmt.Sprintf(t["stale"], date, c.fresh.Stale)
	}
	if c.late {
		v.Notes = append(v.Notes, fmt.Sprintf(t["late"], report.DateTime(c.scheduled, c.d.Locale, c.loc)))
	}
	switch c.kind {
	case "resend":
		v.Notes = append(v.Notes, t["resent"])
	case "again":
		v.Notes = append(v.Notes, fmt.Sprintf(t["again"], c.d.Name, c.asOf.Format(time.DateOnly)))
	case "test":
		v.Notes = append(v.Notes, fmt.Sprintf(t["test"], c.d.Name, c.asOf.Format(time.DateOnly), strings.Join(c.d.To, ","), strings.Join(c.recipients, ", ")))
	}
	// The staleness is said once at the top, not again among each report's warnings.
	for _, dg := range c.digests {
		var ws []string
		for _, w := range dg.Warnings {
			if w != v.Stale {
				ws = append(ws, w)
			}
		}
		dg.Warnings = ws
		v.Reports = append(v.Reports, dg)
	}
	for _, f := range c.files {
		v.Files = append(v.Files, fileLine{Name: filepath.Base(f.Path), Size: size(f.Bytes, c.d.Locale)})
	}
	if c.attached {
		v.FilesHead = fmt.Sprintf(t["attached"], len(c.files), size(c.totalBytes, c.d.Locale))
	} else {
		v.FilesHead = fmt.Sprintf(t["not_attached"], size(c.totalBytes, c.d.Locale), size(int64(c.d.MaxAttachMB*1e6), c.d.Locale), c.dir)
	}
	v.Footer = fmt.Sprintf(t["footer"], c.d.Name, c.asOf.Format(time.DateOnly), c.messageID)

	var h bytes.Buffer
	if err := htmlTmpl.Execute(&h, v); err != nil {
		return message{}, fmt.Errorf("message body: %w", err)
	}
	return message{Subject: subject, Text: plain(v), HTML: h.String()}, nil
}

// view is what the two bodies show.
type view struct {
	Subject, Intro, Sync, Stale string
	Notes                       []string
	Reports                     []report.Digest
	FilesHead                   string
	Files                       []fileLine
	Footer                      string
	T                           map[string]string
}

type fileLine struct{ Name, Size string }

// plain is the text part: the same as the HTML, line by line.
func plain(v view) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n\n%s\n", v.Intro, v.Sync)
	if v.Stale != "" {
		w("\n%s\n", v.Stale)
	}
	for _, n := range v.Notes {
		w("\n%s\n", n)
	}
	for _, r := range v.Reports {
		w("\n== %s ==\n", r.Title)
		if len(r.Warnings) > 0 {
			w("%s:\n", v.T["warnings"])
			for _, x := range r.Warnings {
				w("  ! %s\n", x)
			}
		}
		if len(r.Headline) > 0 {
			w("%s:\n", v.T["headline"])
			for _, l := range r.Headline {
				switch {
				case l.Table != nil:
					w("  %s:\n", l.Label)
					for _, row := range textTable(l.Table) {
						w("    %s\n", row)
					}
				case l.Value == "": // a headline sheet's heading: its lines follow
					w("  %s:\n", l.Label)
				default:
					w("  %s: %s\n", l.Label, l.Value)
				}
			}
		}
		if len(r.Headline) == 0 && len(r.Checks) == 0 {
			w("%s:\n", v.T["sheets"])
			for _, l := range r.Sheets {
				w("  %s: %s\n", l.Label, l.Value)
			}
		}
		if len(r.Checks) > 0 {
			w("%s:\n", v.T["checks"])
			for _, l := range r.Checks {
				mark := v.T["ok"]
				if l.Bad {
					mark = v.T["bad"]
				} else if l.Plain {
					mark = "-"
				}
				w("  [%s] %s: %s\n", mark, l.Label, l.Value)
			}
		}
	}
	w("\n%s\n", v.FilesHead)
	for _, f := range v.Files {
		w("  %s (%s)\n", f.Name, f.Size)
	}
	w("\n-- \n%s\n", v.Footer)
	return b.String()
}

// textTable is a headline table as lines of text that line up in a fixed-width font: the
// labels aligned left, each figure right under its title, a rule above the totals row.
func textTable(t *report.Table) []string {
	all := append([][]string{t.Head}, t.Rows...)
	if t.Total != nil {
		all = append(all, t.Total)
	}
	widths := make([]int, len(t.Head))
	for _, r := range all {
		for k, c := range r {
			widths[k] = max(widths[k], utf8.RuneCountInString(c))
		}
	}
	line := func(r []string) string {
		var b strings.Builder
		for k, c := range r {
			pad := strings.Repeat(" ", widths[k]-utf8.RuneCountInString(c))
			if k == 0 {
				b.WriteString(c + pad)
				continue
			}
			b.WriteString("  " + pad + c)
		}
		return strings.TrimRight(b.String(), " ")
	}
	var out []string
	for _, r := range append([][]string{t.Head}, t.Rows...) {
		out = append(out, line(r))
	}
	if t.Total != nil {
		total := 0
		for _, w := range widths {
			total += w + 2
		}
		out = append(out, strings.Repeat("-", total-2), line(t.Total))
	}
	if t.More != "" {
		out = append(out, t.More)
	}
	return out
}

var htmlTmpl = template.Must(template.New("mail").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.Subject}}</title></head>
<body style="font-family: Arial, Helvetica, sans-serif; font-size: 14px; color: #222; max-width: 760px;">
<p>{{.Intro}}</p>
<p style="color: #555;">{{.Sync}}</p>
{{if .Stale}}<p style="background: #fde2e1; border-left: 4px solid #c0392b; padding: 8px;"><strong>{{.Stale}}</strong></p>{{end}}
{{range .Notes}}<p style="background: #fff4d6; border-left: 4px solid #e0a800; padding: 8px;">{{.}}</p>{{end}}
{{range .Reports}}
<h2 style="font-size: 17px; border-bottom: 1px solid #ccc; margin-top: 24px;">{{.Title}}</h2>
{{if .Warnings}}<ul style="color: #c0392b;">{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Headline}}<h3 style="font-size: 14px;">{{$.T.headline}}</h3>
<table style="border-collapse: collapse;">{{range .Headline}}{{if .Table}}
<tr><td colspan="2" style="padding: 8px 0 4px 0;"><strong>{{.Label}}</strong>
<table style="border-collapse: collapse; margin-top: 4px;">
<thead><tr>{{range $i, $h := .Table.Head}}<th style="padding: 2px 8px 2px 0; border-bottom: 1px solid #222; vertical-align: bottom; {{if $i}}text-align: right;{{else}}text-align: left;{{end}}">{{$h}}</th>{{end}}</tr></thead>
<tbody>{{range .Table.Rows}}
<tr>{{range $i, $c := .}}<td style="padding: 2px 8px 2px 0; vertical-align: top; {{if $i}}text-align: right; white-space: nowrap;{{end}}">{{$c}}</td>{{end}}</tr>{{end}}
</tbody>{{with .Table.Total}}
<tfoot><tr>{{range $i, $c := .}}<td style="padding: 2px 8px 2px 0; border-top: 1px solid #222; font-weight: bold; vertical-align: top; {{if $i}}text-align: right; white-space: nowrap;{{end}}">{{$c}}</td>{{end}}</tr></tfoot>{{end}}
</table>{{with .Table.More}}
<div style="color: #555;">{{.}}</div>{{end}}</td></tr>{{else}}
<tr><td style="padding: 2px 12px 2px 0; vertical-align: top;">{{.Label}}</td><td style="padding: 2px 0; text-align: right; vertical-align: top; white-space: nowrap;"><strong>{{.Value}}</strong></td></tr>{{end}}{{end}}
</table>{{end}}
{{if and (not .Headline) (not .Checks)}}<h3 style="font-size: 14px;">{{$.T.sheets}}</h3>
<table style="border-collapse: collapse;">{{range .Sheets}}
<tr><td style="padding: 2px 12px 2px 0; vertical-align: top;">{{.Label}}</td><td style="padding: 2px 0;">{{.Value}}</td></tr>{{end}}
</table>{{end}}
{{if .Checks}}<h3 style="font-size: 14px;">{{$.T.checks}}</h3>
<table style="border-collapse: collapse;">{{range .Checks}}
<tr><td style="padding: 2px 8px 2px 0; vertical-align: top;">{{if .Bad}}<span style="color: #fff; background: #c0392b; padding: 0 4px;">{{$.T.bad}}</span>{{else if .Plain}}-{{else}}<span style="color: #fff; background: #2e7d32; padding: 0 4px;">{{$.T.ok}}</span>{{end}}</td><td style="padding: 2px 12px 2px 0; vertical-align: top;">{{.Label}}</td><td style="padding: 2px 0;">{{.Value}}</td></tr>{{end}}
</table>{{end}}
{{end}}
<p style="margin-top: 24px;">{{.FilesHead}}</p>
<ul>{{range .Files}}<li>{{.Name}} ({{.Size}})</li>{{end}}</ul>
<p style="color: #888; font-size: 12px;">{{.Footer}}</p>
</body></html>
`))

// size is a file size for people: 1.2 MB, 830 kB (Indonesian writes 1,2 MB).
func size(n int64, locale string) string {
	switch {
	case n >= 1e6:
		s := fmt.Sprintf("%.1f MB", float64(n)/1e6)
		if locale != "en" {
			s = strings.Replace(s, ".", ",", 1)
		}
		return s
	case n >= 1e3:
		return fmt.Sprintf("%d kB", (n+500)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// age is a duration for people in the locale: "3 jam 5 menit", "2 days 4 hours".
func age(d time.Duration, locale string) string {
	if d < 0 {
		d = 0
	}
	unit := map[string][3]string{"id": {"hari", "jam", "menit"}, "en": {"days", "hours", "minutes"}}
	u, ok := unit[locale]
	if !ok {
		u = unit["id"]
	}
	days, hours, mins := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	var parts []string
	if days > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", days, u[0]))
	}
	if hours > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", hours, u[1]))
	}
	if days == 0 {
		parts = append(parts, fmt.Sprintf("%d %s", mins, u[2]))
	}
	return strings.Join(parts, " ")
}
