// The minimum-norm solution of an underdetermined linear system, in float64 (the EAGLE-3 oracle's fc blocks):
// F = X^T (X X^T)^-1 S for X [rows, cols] of full row rank, so X F = S row by row. Cholesky on the Gram matrix;
// a row (nearly) dependent on the others is an error, not a silently wrong weight.

/** F [cols, outCols] with X F = S (X [rows, cols], S [rows, outCols], row-major). */
export function solveRows(x: Float64Array, rows: number, cols: number, s: Float64Array, outCols: number): Float64Array {
  const gram = new Float64Array(rows * rows);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j <= i; j++) {
      let dot = 0;
      for (let c = 0; c < cols; c++) dot += x[i * cols + c] * x[j * cols + c];
      gram[i * rows + j] = gram[j * rows + i] = dot;
    }
  const lower = cholesky(gram, rows);
  // Y = (X X^T)^-1 S, column by column: forward then backward substitution.
  const y = new Float64Array(rows * outCols);
  const column = new Float64Array(rows);
  for (let o = 0; o < outCols; o++) {
    for (let i = 0; i < rows; i++) {
      let v = s[i * outCols + o];
      for (let j = 0; j < i; j++) v -= lower[i * rows + j] * column[j];
      column[i] = v / lower[i * rows + i];
    }
    for (let i = rows - 1; i >= 0; i--) {
      let v = column[i];
      for (let j = i + 1; j < rows; j++) v -= lower[j * rows + i] * y[j * outCols + o];
      y[i * outCols + o] = v / lower[i * rows + i];
    }
  }
  const f = new Float64Array(cols * outCols);
  for (let i = 0; i < rows; i++)
    for (let c = 0; c < cols; c++) {
      const xv = x[i * cols + c];
      if (xv !== 0) for (let o = 0; o < outCols; o++) f[c * outCols + o] += xv * y[i * outCols + o];
    }
  return f;
}

function cholesky(a: Float64Array, n: number): Float64Array {
  const lower = new Float64Array(n * n);
  const scale = Math.max(...Array.from({ length: n }, (_, i) => a[i * n + i]));
  for (let i = 0; i < n; i++)
    for (let j = 0; j <= i; j++) {
      let v = a[i * n + j];
      for (let k = 0; k < j; k++) v -= lower[i * n + k] * lower[j * n + k];
      if (i === j) {
        // A pivot this small against the largest diagonal: row i is (nearly) a combination of the rows before it.
        if (!(v > scale * 1e-10)) throw new Error(`linear solve: row ${i} is dependent on the rows before it`);
        lower[i * n + i] = Math.sqrt(v);
      } else lower[i * n + j] = v / lower[j * n + j];
    }
  return lower;
}
