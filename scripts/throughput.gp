# scripts/throughput.gp - throughput against threads for one workload, from the
# DIR/plots/throughput_<w>.dat file that scripts/stmbench_report.py writes (a header
# line of column names, then "threads <Mops/s per runtime...> <seq at 1 thread>").
#
# Variables (gnuplot -e): datafile, outfile, ttl (title), ncols (columns in datafile),
# term: "pngcairo", "png" or "dumb" (dumb prints to stdout when outfile is ""), hw: the
# machine's hardware threads when some point has more threads (the oversubscribed
# points: shaded and labelled), else 0.
#   gnuplot -e "datafile='d.dat'; outfile='t.png'; ttl='bank'; ncols=6; term='pngcairo'" scripts/throughput.gp

if (!exists("term")) term = "pngcairo"
if (term eq "dumb") {
    set terminal dumb size 100,28 aspect 1,1
} else {
    if (term eq "pngcairo") {
        set terminal pngcairo size 800,520 enhanced font "sans,10"
    } else {
        set terminal png size 800,520
    }
}
if (exists("outfile") && outfile ne "") set output outfile

set title ttl noenhanced
set xlabel "threads"
set ylabel "throughput (Mops/s, median)"
set key outside right top noenhanced
set grid
set yrange [0:*]
set xtics 1
set datafile missing "NaN"
set style data linespoints
set autoscale xfix
set offsets 0.25, 0.25, 0, 0
if (!exists("hw")) hw = 0
if (hw > 0) {
    set object 1 rect from first hw + 0.5, graph 0 to graph 1, graph 1 behind \
        fillcolor rgb "#e8e8e8" fillstyle solid 1.0 noborder
    set label 1 sprintf("oversubscribed (> %d hardware threads)", hw) \
        at first hw + 0.55, graph 0.96 left font ",8"
}
# With hasseq=1 the last column is seq at 1 thread, repeated on every line: drawn as a
# dashed horizontal line.
if (!exists("hasseq")) hasseq = 1
if (hasseq && ncols > 2) {
    plot for [i=2:ncols-1] datafile using 1:i title columnheader(i) lw 2 pt (i-1), \
         datafile using 1:ncols title columnheader(ncols) with lines dashtype 2 lc rgb "#444444" lw 2
} else {
    if (hasseq) {
        plot datafile using 1:2 title columnheader(2) with lines dashtype 2 lc rgb "#444444" lw 2
    } else {
        plot for [i=2:ncols] datafile using 1:i title columnheader(i) lw 2 pt (i-1)
    }
}
