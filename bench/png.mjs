// A tiny PNG line plot: no dependencies beyond node:zlib. Good enough for "latency vs N".
import { deflateSync } from "node:zlib";

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

function encodePng(width, height, rgb) {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 3 + 1)] = 0;
    rgb.copy(raw, y * (width * 3 + 1) + 1, y * width * 3, (y + 1) * width * 3);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

// 3x5 glyphs for labels (letters are drawn as capitals)
const DIGITS = {
  0: "111101101101111",
  1: "010110010010111",
  2: "111001111100111",
  3: "111001111001111",
  4: "101101111001001",
  5: "111100111001111",
  6: "111100111101111",
  7: "111001001001001",
  8: "111101111101111",
  9: "111101111001111",
  ".": "000000000000010",
  A: "010101111101101",
  B: "110101110101110",
  C: "011100100100011",
  D: "110101101101110",
  E: "111100110100111",
  F: "111100110100100",
  G: "011100101101011",
  H: "101101111101101",
  I: "111010010010111",
  J: "001001001101010",
  K: "101101110101101",
  L: "100100100100111",
  M: "101111111101101",
  N: "110101101101101",
  O: "010101101101010",
  P: "110101110100100",
  Q: "010101101110011",
  R: "110101110101101",
  S: "011100010001110",
  T: "111010010010010",
  U: "101101101101111",
  V: "101101101101010",
  W: "101101111111101",
  X: "101101010101101",
  Y: "101101010010010",
  Z: "111001010100111",
  " ": "000000000000000",
  "(": "010100100100010",
  ")": "010001001001010",
  "-": "000000111000000",
  "/": "001001010100100",
  ":": "000010000010000",
  ",": "000000000010100",
};

/**
 * series: [{ name, color: [r,g,b], points: [[x, y], ...] }]. Returns a PNG buffer.
 * Axes start at 0; optional title, axis labels, and a legend of the series' names.
 */
export function linePlot(series, { width = 640, height = 400, title, xLabel, yLabel } = {}) {
  const img = Buffer.alloc(width * height * 3, 255);
  const set = (x, y, c) => {
    x = Math.round(x);
    y = Math.round(y);
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const i = (y * width + x) * 3;
    img[i] = c[0];
    img[i + 1] = c[1];
    img[i + 2] = c[2];
  };
  const line = (x0, y0, x1, y1, c, thick = 1) => {
    const steps = Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0), 1);
    for (let s = 0; s <= steps; s++) {
      const x = x0 + ((x1 - x0) * s) / steps;
      const y = y0 + ((y1 - y0) * s) / steps;
      for (let dx = 0; dx < thick; dx++) for (let dy = 0; dy < thick; dy++) set(x + dx, y + dy, c);
    }
  };
  const text = (s, x, y, c, scale = 2) => {
    let cx = x;
    for (const ch of s) {
      const g = DIGITS[ch.toUpperCase()];
      if (g) {
        for (let r = 0; r < 5; r++)
          for (let col = 0; col < 3; col++)
            if (g[r * 3 + col] === "1")
              for (let a = 0; a < scale; a++)
                for (let b = 0; b < scale; b++) set(cx + col * scale + a, y + r * scale + b, c);
      }
      cx += 4 * scale;
    }
  };
  const m = { l: 60, r: 20, t: title ? 50 : 20, b: xLabel ? 56 : 40 };
  const all = series.flatMap((s) => s.points);
  // round tick steps (1, 2 or 5 × 10^k), axes ending on a tick
  const nice = (max) => {
    const raw = max / 5;
    const pow = 10 ** Math.floor(Math.log10(raw));
    const step = Math.max(1, [1, 2, 5, 10].map((k) => k * pow).find((v) => v >= raw) ?? 10 * pow);
    return { step, max: step * Math.ceil(max / step) };
  };
  const xt = nice(Math.max(1, ...all.map((p) => p[0])));
  const yt = nice(Math.max(1, ...all.map((p) => p[1])) * 1.05);
  const xmax = xt.max;
  const ymax = yt.max;
  const px = (x) => m.l + (x / xmax) * (width - m.l - m.r);
  const py = (y) => height - m.b - (y / ymax) * (height - m.t - m.b);
  const grey = [200, 200, 200];
  const black = [0, 0, 0];
  for (let yv = 0; yv <= ymax; yv += yt.step) {
    line(m.l, py(yv), width - m.r, py(yv), grey);
    text(String(yv), 4, py(yv) - 5, black);
  }
  for (let xv = 0; xv <= xmax; xv += xt.step) {
    line(px(xv), m.t, px(xv), height - m.b, grey);
    text(String(xv), px(xv) - 6, height - m.b + 8, black);
  }
  line(m.l, m.t, m.l, height - m.b, black, 2);
  line(m.l, height - m.b, width - m.r, height - m.b, black, 2);
  if (title) text(title, m.l, 12, black);
  if (xLabel) text(xLabel, (width - xLabel.length * 8) / 2, height - 18, black);
  if (yLabel) text(yLabel, 4, m.t - 24, black);
  series.forEach((s, i) => {
    const x = width - m.r - 110;
    const y = m.t + 8 + i * 16;
    for (let a = 0; a < 10; a++) for (let b = 0; b < 10; b++) set(x + a, y + b, s.color);
    text(s.name, x + 16, y, black);
  });
  for (const s of series) {
    const pts = [...s.points].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < pts.length; i++)
      line(px(pts[i - 1][0]), py(pts[i - 1][1]), px(pts[i][0]), py(pts[i][1]), s.color, 2);
    for (const p of pts)
      for (let a = -2; a <= 2; a++) for (let b = -2; b <= 2; b++) set(px(p[0]) + a, py(p[1]) + b, s.color);
  }
  return encodePng(width, height, img);
}
