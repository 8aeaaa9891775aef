/** A Markdown table; numbers are right-aligned. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const align = header.map((_, i) => (rows.some((r) => typeof r[i] === 'number') ? '---:' : '---'));
  const line = (cells: Array<string | number>) => `| ${cells.map(String).join(' | ')} |`;
  return [line(header), line(align), ...rows.map(line)].join('\n');
}

export const round = (n: number, digits = 0): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** The median (the mean of the two middle values for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
