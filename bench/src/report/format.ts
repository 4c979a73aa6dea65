import type { Cell, Column } from '../scenarios/scenario.js';

/** A number as a table shows it: thousands grouped, `digits` decimals; blanks for nothing. */
export function formatCell(value: Cell | undefined, column: Pick<Column, 'digits'>): string {
  if (value === null || value === undefined) return '–';
  if (typeof value === 'string') return value;
  if (Number.isNaN(value)) return '–';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '−∞';
  const digits = column.digits ?? 2;
  return value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
