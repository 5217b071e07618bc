// Charts drawn with uPlot (vendored, see vendor/uPlot.LICENSE). Charts show
// the numbers of report answers as they are; stacking bars is drawing, not
// computing. Each chart has a text alternative, and the same numbers are in
// a table on its page.

import { epochSeconds, money, count, percent } from './format.js'
import { h } from './controls.js'

// The global of the uPlot script (absent where the browser tests load this
// module in Node for its pure functions).
const uPlot = globalThis.uPlot

export const MOVEMENTS = [
  { key: 'new', label: 'New', color: '#1a7f37', up: true },
  { key: 'expansion', label: 'Expansion', color: '#0969da', up: true },
  { key: 'reactivation', label: 'Reactivation', color: '#8250df', up: true },
  { key: 'contraction', label: 'Contraction', color: '#bc4c00', up: false },
  { key: 'churn', label: 'Churn', color: '#cf222e', up: false }
]

const DAY = 86400
/**
 * The steps between time ticks, in seconds: days, weeks, then whole months
 * and years. uPlot's own list also has 10 and 15 days, which put ticks of a
 * monthly series between its months (1/16, 1/31, 2/15).
 */
const TICK_STEPS = [DAY, 2 * DAY, 7 * DAY, 30 * DAY, 2 * 30 * DAY, 3 * 30 * DAY, 6 * 30 * DAY, 365 * DAY, 2 * 365 * DAY, 5 * 365 * DAY, 10 * 365 * DAY]
const timeAxis = () => ({ incrs: TICK_STEPS })

/**
 * Creates the uPlot once the wrapper has a width, and resizes it with it;
 * the wrapper's `plot` is the uPlot (for the browser tests to read).
 */
function mountWhenSized (wrapper, height, make) {
  let plot = null
  const observer = new ResizeObserver(() => {
    const width = wrapper.clientWidth
    if (!width) return
    if (!plot) wrapper.plot = plot = make(width, height)
    else if (Math.abs(plot.width - width) > 1) plot.setSize({ width, height })
  })
  observer.observe(wrapper)
}

/** Calls `onPick(index)` with the period nearest a click on the plot. */
function pickOnClick (plot, xs, onPick) {
  plot.over.style.cursor = 'pointer'
  plot.over.addEventListener('click', (event) => {
    const x = plot.posToVal(event.offsetX, 'x')
    let best = 0
    xs.forEach((value, i) => { if (Math.abs(value - x) < Math.abs(xs[best] - x)) best = i })
    if (xs.length) onPick(best)
  })
}

/**
 * The bars of series `index` of `count`, side by side with the others
 * around each period: together they take seven tenths of the shortest
 * period, so no bar hides behind another (drawn at one place, a smaller
 * count of trials vanished behind the conversions).
 */
function groupedBars (xs, index, count) {
  const gaps = xs.slice(1).map((x, i) => x - xs[i])
  const width = (gaps.length ? Math.min(...gaps) : 86400 * 28) * 0.7 / count
  const starts = xs.map((x) => x + (index - count / 2) * width)
  return uPlot.paths.bars({
    disp: {
      x0: { unit: 1, values: () => starts },
      size: { unit: 1, values: () => [width] }
    }
  })
}

/** Pads the x range by half a period so the first and last bars show whole. */
function paddedRange (xs) {
  const step = xs.length > 1 ? xs[1] - xs[0] : 86400 * 15
  return () => [xs[0] - step / 2, xs[xs.length - 1] + step / 2]
}

function formatter (kind, currency) {
  if (kind === 'money') return (v) => money(v, currency)
  if (kind === 'percent') return (v) => percent(v)
  return (v) => count(v)
}

function axisMoney (currency, { negative = true } = {}) {
  return (u, values) => values.map((v) => v === null || (v < 0 && !negative) ? '' : money(v, currency).replace(/\.00$/, ''))
}

/** How far past its extremes an axis of the MRR chart runs: a tenth. */
const PAD = 1.1
/** The top of a chart with only zeros to show: 100.00 of the currency (in cents). */
const FLAT_TOP = 10000

/**
 * The ranges of the MRR chart's two value axes, `{mrr: [min, max], mov:
 * [min, max]}`, with their zeros at one height: the movement bars start on
 * the line where MRR is zero, and "no movement" reads off either axis.
 *
 * Each axis shows its values and zero: MRR from its lowest to its highest
 * value, movements from the largest stack of losses of a period (the
 * negative values, as drawn) to the largest stack of gains. Both axes get
 * the same ratio of room below zero to room above it: the larger of the
 * two axes' own ratios, at most 1, so at most half the plot is below zero
 * and the MRR line keeps the upper half at least. An axis's top is its
 * highest value, raised where its lowest needs more room below at that
 * ratio; both ends then go a tenth further, so nothing is drawn on an edge.
 * With MRR of zero or more and more gains than losses (the usual case) the
 * movement axis is [1.1 × losses, 1.1 × gains] and the MRR axis [1.1 ×
 * highest × losses / gains, 1.1 × highest].
 *
 * Edge cases. Movements all zero or more: both zeros at the bottom, MRR
 * [0, 1.1 × highest]. Movements all below zero: both zeros at mid-height,
 * MRR [-1.1 × highest, 1.1 × highest], movements [1.1 × losses, -1.1 ×
 * losses]. An axis with only zeros (all movements zero, or MRR zero
 * throughout) takes the other's range, whose labels then read on both
 * sides; with only zeros on both (no periods) both are [0, 1.1 × FLAT_TOP].
 */
export function mrrChartRanges (periods) {
  const stacks = (sign) => periods.map((p) => MOVEMENTS.reduce((sum, m) => sum + (Math.sign(p[m.key]) === sign ? p[m.key] : 0), 0))
  const extents = {
    mrr: [Math.min(0, ...periods.map((p) => p.total_mrr)), Math.max(0, ...periods.map((p) => p.total_mrr))],
    mov: [Math.min(0, ...stacks(-1)), Math.max(0, ...stacks(1))]
  }
  const ratio = ([lowest, highest]) => lowest === 0 ? 0 : highest === 0 ? Infinity : -lowest / highest
  const below = Math.min(1, Math.max(ratio(extents.mrr), ratio(extents.mov)))
  const fit = ([lowest, highest]) => {
    const top = -lowest > below * highest ? -lowest / below : highest
    return top === 0 ? null : [below === 0 ? 0 : -below * top * PAD, top * PAD]
  }
  const mrr = fit(extents.mrr)
  const mov = fit(extents.mov)
  const flat = [0, FLAT_TOP * PAD]
  return { mrr: mrr || mov || flat, mov: mov || mrr || flat }
}

/**
 * The MRR chart: total MRR as a line on the left axis, the five movements
 * of each period as stacked bars (gains up, losses down) on the right
 * axis, both axes with their zero on one line (see `mrrChartRanges`).
 * `onPick(index)` is called when a period is clicked.
 */
export function mrrChart (periods, { currency, onPick, height = 300, label = 'MRR chart' }) {
  const xs = periods.map((p) => epochSeconds(p.date))
  const data = [xs, periods.map((p) => p.total_mrr), ...MOVEMENTS.map((m) => periods.map((p) => p[m.key]))]
  const ranges = mrrChartRanges(periods)
  const wrapper = h('div', { class: 'chart', role: 'img', 'aria-label': `${label}: total MRR line and movement bars per period; the table below has every value` })
  const drawBars = (u) => {
    const { ctx } = u
    const step = xs.length > 1 ? u.valToPos(xs[1], 'x', true) - u.valToPos(xs[0], 'x', true) : u.bbox.width / 3
    const width = Math.max(2, step * 0.6)
    ctx.save()
    ctx.beginPath()
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height)
    ctx.clip()
    periods.forEach((p, i) => {
      const x = u.valToPos(xs[i], 'x', true) - width / 2
      let up = 0
      let down = 0
      MOVEMENTS.forEach((m, k) => {
        if (!u.series[k + 2].show) return
        const value = p[m.key]
        if (!value) return
        const from = value > 0 ? up : down
        const to = from + value
        if (value > 0) up = to
        else down = to
        const y0 = u.valToPos(from, 'mov', true)
        const y1 = u.valToPos(to, 'mov', true)
        ctx.fillStyle = m.color
        ctx.fillRect(x, Math.min(y0, y1), width, Math.abs(y1 - y0))
      })
    })
    // The zero line of both axes, darker than the grid, across the bars' feet.
    const line = Math.max(1, Math.round(uPlot.pxRatio))
    ctx.fillStyle = '#6e7781'
    ctx.fillRect(u.bbox.left, Math.round(u.valToPos(0, 'mov', true) - line / 2), u.bbox.width, line)
    ctx.restore()
  }
  mountWhenSized(wrapper, height, (width) => {
    const plot = new uPlot({
      width,
      height,
      scales: {
        x: { time: true, range: paddedRange(xs) },
        mrr: { range: () => [...ranges.mrr] },
        mov: { range: () => [...ranges.mov] }
      },
      axes: [
        timeAxis(),
        // Below zero the MRR axis is room for the losses' bars: no labels.
        { scale: 'mrr', values: axisMoney(currency, { negative: false }), size: 80 },
        { scale: 'mov', side: 1, values: axisMoney(currency), size: 80, grid: { show: false } }
      ],
      series: [
        {},
        { label: 'MRR', scale: 'mrr', stroke: '#24292f', width: 2, value: (u, v) => money(v, currency) },
        ...MOVEMENTS.map((m) => ({ label: m.label, scale: 'mov', stroke: m.color, fill: m.color, paths: () => null, points: { show: false }, value: (u, v) => money(v, currency) }))
      ],
      hooks: { drawAxes: [drawBars] }
    }, data, wrapper)
    if (onPick) pickOnClick(plot, xs, onPick)
    return plot
  })
  return wrapper
}

/**
 * A line (or bar) chart over periods: `series` of {label, values, color,
 * kind ('money', 'count', 'percent')}.
 */
export function lineChart (dates, series, { currency, height = 240, bars = false, label = 'Chart', onPick } = {}) {
  const xs = dates.map(epochSeconds)
  const wrapper = h('div', { class: 'chart', role: 'img', 'aria-label': `${label}; the table below has every value` })
  const kinds = [...new Set(series.map((s) => s.kind || 'count'))]
  mountWhenSized(wrapper, height, (width) => {
    const plot = new uPlot({
      width,
      height,
      scales: { x: { time: true, range: bars ? paddedRange(xs) : undefined } },
      axes: [timeAxis(), ...kinds.map((kind, i) => ({
        scale: kind,
        side: i === 0 ? 3 : 1,
        size: 80,
        grid: { show: i === 0 },
        values: (u, values) => values.map((v) => v === null ? '' : formatter(kind, currency)(v).replace(/\.00(%?)$/, '$1'))
      }))],
      series: [{}, ...series.map((s, index) => ({
        label: s.label,
        scale: s.kind || 'count',
        stroke: s.color,
        width: 2,
        fill: bars ? s.color + 'cc' : undefined,
        paths: bars ? groupedBars(xs, index, series.length) : undefined,
        // A point marks a line's value; a bar's top already does.
        points: bars ? { show: false } : undefined,
        value: (u, v) => v === null ? '–' : formatter(s.kind || 'count', currency)(v)
      }))]
    }, [xs, ...series.map((s) => s.values)], wrapper)
    if (onPick) pickOnClick(plot, xs, onPick)
    return plot
  })
  return wrapper
}

/**
 * A sparkline's value range: its lowest to its highest value with a tenth
 * of the span added on each side (a flat line gets 1 each side), so a line
 * at either end is drawn whole. Without it, a run of zeros at the bottom of
 * a rate's trend sat on the canvas's edge and was cut away.
 */
function sparklineRange (plot, lowest, highest) {
  if (lowest === null || highest === null) return [0, 1]
  const pad = highest > lowest ? (highest - lowest) / 10 : 1
  return [lowest - pad, highest + pad]
}

/** A small line of `values` with no axes, for a figure's trend. */
export function sparkline (dates, values, label) {
  const wrapper = h('div', { class: 'sparkline', role: 'img', 'aria-label': `${label} trend` })
  const xs = dates.map(epochSeconds)
  mountWhenSized(wrapper, 36, (width) => new uPlot({
    width,
    height: 36,
    legend: { show: false },
    cursor: { show: false },
    axes: [{ show: false }, { show: false }],
    scales: { x: { time: true }, y: { range: sparklineRange } },
    series: [{}, { stroke: '#0969da', width: 1.5, points: { show: false } }]
  }, [xs, values], wrapper))
  return wrapper
}
