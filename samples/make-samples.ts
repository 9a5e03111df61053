/**
 * Generates samples/cc3m/: a 10-record CC3M dataset in img2dataset's `files` layout for the offline
 * quickstart. Eight procedural scenes (SVG rendered to ~640x480 JPEG) pass the image stage; one
 * near-blank and one too-small image show its rejections. The images are drawn here, so they carry
 * no third-party rights.
 *
 * Run once with `npx tsx samples/make-samples.ts`; its output is committed. Re-running rewrites the
 * folder (the bar chart's text depends on the fonts installed, so bytes may differ across machines).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { imageSchema } from '../config/imageConfig.js';
import { sha256Hex } from '../domain/hashing.js';
import { normalizeImage } from '../image/normalize.js';

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'cc3m');
const W = 640;
const H = 480;
const MAX_BYTES = 60_000;

interface Scene {
  name: string;
  caption: string;
  svg: string;
  width?: number;
  height?: number;
  /** What the image stage must say about it: accepted, or the rejection code. */
  expect: 'ok' | 'blank' | 'too-small';
}

const svg = (body: string, width = W, height = H) => `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${body}</svg>`;

const gradient = (id: string, stops: string[], vertical = true) =>
  `<linearGradient id="${id}" x1="0" y1="0" x2="${vertical ? 0 : 1}" y2="${vertical ? 1 : 0}">` +
  stops.map((c, i) => `<stop offset="${i / (stops.length - 1)}" stop-color="${c}"/>`).join('') +
  `</linearGradient>`;

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

function sunsetOverHills(): string {
  const birds = [
    [200, 120],
    [235, 105],
    [262, 128],
  ]
    .map(([x, y]) => `<path d="M${x! - 12} ${y} q6 -7 12 0 q6 -7 12 0" stroke="#3a2540" stroke-width="2.5" fill="none"/>`)
    .join('');
  return svg(`
    <defs>${gradient('sky', ['#3b2a6b', '#b24a72', '#f58b4c', '#ffd27a'])}
      <radialGradient id="sun"><stop offset="0.6" stop-color="#fff3b0"/><stop offset="1" stop-color="#ffcf5c" stop-opacity="0"/></radialGradient></defs>
    <rect width="${W}" height="${H}" fill="url(#sky)"/>
    <circle cx="420" cy="300" r="95" fill="url(#sun)"/>
    <circle cx="420" cy="300" r="55" fill="#fff1a8"/>
    <path d="M0 310 Q120 240 260 300 T520 290 T640 270 V480 H0 Z" fill="#6b4f7a"/>
    <path d="M0 350 Q150 290 300 345 T640 330 V480 H0 Z" fill="#3f6b4a"/>
    <path d="M0 400 Q180 350 360 400 T640 390 V480 H0 Z" fill="#2c4f36"/>
    ${birds}`);
}

function citySkyline(): string {
  const buildings = [
    [20, 200, 70],
    [95, 140, 60],
    [160, 240, 80],
    [245, 90, 55],
    [305, 170, 75],
    [385, 120, 50],
    [440, 210, 85],
    [530, 150, 90],
  ];
  const body = buildings
    .map(([x, top, w], b) => {
      const windows = range(Math.floor((360 - top!) / 22))
        .flatMap((row) =>
          range(Math.floor(w! / 16)).map((col) =>
            (row * 7 + col * 3 + b) % 5 === 0
              ? ''
              : `<rect x="${x! + 5 + col * 16}" y="${top! + 10 + row * 22}" width="8" height="11" fill="${(row + col + b) % 3 ? '#ffd86b' : '#f7b24a'}"/>`,
          ),
        )
        .join('');
      return `<rect x="${x}" y="${top}" width="${w}" height="${370 - top!}" fill="${b % 2 ? '#1d2440' : '#262f52'}"/>${windows}`;
    })
    .join('');
  return svg(`
    <defs>${gradient('night', ['#0b1030', '#27306b', '#5b4b8a'])}${gradient('water', ['#1b2350', '#0a0f26'])}</defs>
    <rect width="${W}" height="${H}" fill="url(#night)"/>
    <circle cx="540" cy="80" r="32" fill="#f4f1d8"/><circle cx="552" cy="72" r="30" fill="#2a3170"/>
    ${range(25)
      .map((i) => `<circle cx="${(i * 97) % 640}" cy="${((i * 53) % 150) + 10}" r="1.4" fill="#fff"/>`)
      .join('')}
    ${body}
    <rect y="370" width="${W}" height="110" fill="url(#water)"/>
    ${range(14)
      .map((i) => `<rect x="${20 + i * 45}" y="${385 + (i % 4) * 22}" width="${18 + (i % 3) * 10}" height="3" fill="#ffd86b" opacity="0.55"/>`)
      .join('')}`);
}

function sailboat(): string {
  return svg(`
    <defs>${gradient('sky', ['#7fc4f0', '#cfeaf9'])}${gradient('sea', ['#2a7fb8', '#0d4a78'])}</defs>
    <rect width="${W}" height="${H}" fill="url(#sky)"/>
    <circle cx="110" cy="90" r="40" fill="#fff6c2"/>
    <g fill="#ffffff" opacity="0.9"><ellipse cx="430" cy="80" rx="70" ry="22"/><ellipse cx="480" cy="95" rx="60" ry="20"/><ellipse cx="240" cy="130" rx="50" ry="15"/></g>
    <rect y="290" width="${W}" height="190" fill="url(#sea)"/>
    <path d="M330 90 L330 300 L450 300 Z" fill="#fdfdf5"/>
    <path d="M322 110 L322 300 L240 300 Z" fill="#f2e6c9"/>
    <rect x="324" y="85" width="5" height="230" fill="#5a3b22"/>
    <path d="M225 305 L470 305 L440 345 L260 345 Z" fill="#b8352c"/>
    <path d="M260 345 L440 345" stroke="#7a221c" stroke-width="4"/>
    ${range(9)
      .map((i) => `<path d="M${(i * 83) % 600} ${360 + (i % 4) * 28} q15 -8 30 0 t30 0" stroke="#d8eef9" stroke-width="2.5" fill="none" opacity="0.8"/>`)
      .join('')}`);
}

function barChart(): string {
  const values = [42, 68, 55, 81, 63];
  const labels = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'];
  const colours = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2'];
  const bars = values
    .map((v, i) => {
      const h = v * 3.6;
      const x = 110 + i * 100;
      return (
        `<rect x="${x}" y="${400 - h}" width="60" height="${h}" fill="${colours[i]}" rx="3"/>` +
        `<text x="${x + 30}" y="${392 - h}" font-family="sans-serif" font-size="18" text-anchor="middle" fill="#333">${v}</text>` +
        `<text x="${x + 30}" y="428" font-family="sans-serif" font-size="18" text-anchor="middle" fill="#333">${labels[i]}</text>`
      );
    })
    .join('');
  const grid = range(5)
    .map(
      (i) =>
        `<line x1="80" y1="${400 - i * 72}" x2="610" y2="${400 - i * 72}" stroke="#e3e3e3"/>` +
        `<text x="70" y="${406 - i * 72}" font-family="sans-serif" font-size="14" text-anchor="end" fill="#666">${i * 20}</text>`,
    )
    .join('');
  return svg(`
    <rect width="${W}" height="${H}" fill="#ffffff"/>
    <text x="320" y="48" font-family="sans-serif" font-size="24" font-weight="bold" text-anchor="middle" fill="#222">Cups of coffee sold per day</text>
    ${grid}
    <line x1="80" y1="400" x2="610" y2="400" stroke="#444" stroke-width="2"/>
    <line x1="80" y1="80" x2="80" y2="400" stroke="#444" stroke-width="2"/>
    ${bars}`);
}

function forest(): string {
  const tree = (x: number, base: number, s: number, shade: string) =>
    `<rect x="${x - 4 * s}" y="${base - 20 * s}" width="${8 * s}" height="${22 * s}" fill="#5b3a1e"/>` +
    range(3)
      .map(
        (k) =>
          `<path d="M${x - (34 - k * 7) * s} ${base - (18 + k * 26) * s} L${x} ${base - (62 + k * 26) * s} L${x + (34 - k * 7) * s} ${base - (18 + k * 26) * s} Z" fill="${shade}"/>`,
      )
      .join('');
  const back = range(12)
    .map((i) => tree(20 + i * 56, 300, 1.0, '#4f7d5a'))
    .join('');
  const front = range(7)
    .map((i) => tree(40 + i * 95 + (i % 2) * 20, 420 + (i % 3) * 12, 1.6, i % 2 ? '#1f5631' : '#2a6b3c'))
    .join('');
  return svg(`
    <defs>${gradient('sky', ['#a9d8f5', '#e8f6e9'])}</defs>
    <rect width="${W}" height="${H}" fill="url(#sky)"/>
    <rect y="290" width="${W}" height="190" fill="#6f9f4e"/>
    ${back}
    <path d="M300 480 Q330 400 310 300 L330 300 Q360 400 380 480 Z" fill="#c9b07a"/>
    ${front}`);
}

function kitchenTable(): string {
  return svg(`
    <defs>${gradient('wall', ['#f4e7cf', '#e9d6b3'])}${gradient('wood', ['#a8683a', '#7a4522'])}</defs>
    <rect width="${W}" height="${H}" fill="url(#wall)"/>
    <rect x="400" y="40" width="180" height="150" fill="#bfe3f5" stroke="#ffffff" stroke-width="10"/>
    <line x1="490" y1="40" x2="490" y2="190" stroke="#ffffff" stroke-width="6"/>
    <path d="M0 300 L640 300 L640 480 L0 480 Z" fill="url(#wood)"/>
    ${range(5)
      .map((i) => `<line x1="0" y1="${320 + i * 34}" x2="640" y2="${316 + i * 34}" stroke="#6a3b1c" stroke-width="2" opacity="0.5"/>`)
      .join('')}
    <ellipse cx="300" cy="350" rx="150" ry="38" fill="#2f6f8f"/>
    <path d="M150 345 Q300 470 450 345 Z" fill="#3a86ab"/>
    <circle cx="250" cy="318" r="40" fill="#c8232c"/><circle cx="238" cy="304" r="9" fill="#e9575d"/>
    <circle cx="330" cy="312" r="42" fill="#f28c1b"/><circle cx="318" cy="298" r="9" fill="#f7ad5a"/>
    <circle cx="295" cy="290" r="34" fill="#7cb342"/>
    <path d="M340 285 Q400 250 440 300 Q400 275 345 300 Z" fill="#f6d33c" stroke="#c9a21d" stroke-width="2"/>
    <circle cx="520" cy="390" r="30" fill="#b5162a"/><path d="M520 360 q4 -14 12 -18" stroke="#4a2b12" stroke-width="4" fill="none"/>
    <path d="M60 380 L140 380 L132 440 L68 440 Z" fill="#ffffff"/><rect x="140" y="392" width="18" height="30" rx="8" fill="none" stroke="#ffffff" stroke-width="6"/>`);
}

function mountainLake(): string {
  const mountains = `
    <path d="M0 290 L130 120 L230 230 L330 90 L450 240 L540 150 L640 260 L640 290 Z" fill="#6b7fa3"/>
    <path d="M130 120 L100 160 L125 150 L145 170 L165 148 Z M330 90 L295 140 L325 125 L350 150 L370 135 Z M540 150 L515 185 L540 175 L565 190 Z" fill="#ffffff"/>`;
  return svg(`
    <defs>${gradient('sky', ['#5fa8e6', '#d9eefb'])}${gradient('lake', ['#4c8fbf', '#1f5a85'])}</defs>
    <rect width="${W}" height="${H}" fill="url(#sky)"/>
    ${mountains}
    <rect y="290" width="${W}" height="190" fill="url(#lake)"/>
    <g transform="translate(0 580) scale(1 -1)" opacity="0.35">${mountains}</g>
    ${range(10)
      .map((i) => `<path d="M${15 + i * 64} 300 l-14 0 l14 -40 l14 40 Z" fill="#24523a"/>`)
      .join('')}
    ${range(6)
      .map((i) => `<line x1="${60 + i * 100}" y1="${340 + i * 18}" x2="${120 + i * 100}" y2="${340 + i * 18}" stroke="#d6ecf7" stroke-width="2" opacity="0.6"/>`)
      .join('')}`);
}

function streetWithHouses(): string {
  const colours = ['#e07a5f', '#81b29a', '#f2cc8f', '#9d8ec7'];
  const houses = range(4)
    .map((i) => {
      const x = 20 + i * 158;
      return (
        `<rect x="${x}" y="190" width="130" height="120" fill="${colours[i]}"/>` +
        `<path d="M${x - 10} 195 L${x + 65} 130 L${x + 140} 195 Z" fill="#6d3b2e"/>` +
        `<rect x="${x + 52}" y="250" width="28" height="60" fill="#5a3522"/>` +
        `<rect x="${x + 14}" y="215" width="28" height="26" fill="#dff1fb" stroke="#ffffff" stroke-width="3"/>` +
        `<rect x="${x + 90}" y="215" width="28" height="26" fill="#dff1fb" stroke="#ffffff" stroke-width="3"/>`
      );
    })
    .join('');
  return svg(`
    <defs>${gradient('sky', ['#8ecdf2', '#e3f4fc'])}</defs>
    <rect width="${W}" height="${H}" fill="url(#sky)"/>
    <circle cx="570" cy="70" r="36" fill="#ffe27a"/>
    ${houses}
    <rect y="310" width="${W}" height="40" fill="#c9c4bb"/>
    <rect y="350" width="${W}" height="130" fill="#55585e"/>
    ${range(8)
      .map((i) => `<rect x="${10 + i * 85}" y="410" width="45" height="8" fill="#f5f1e6"/>`)
      .join('')}
    ${range(3)
      .map((i) => `<rect x="${150 + i * 160}" y="270" width="8" height="45" fill="#5b3a1e"/><circle cx="${154 + i * 160}" cy="262" r="24" fill="#3f8a4a"/>`)
      .join('')}`);
}

/** Almost uniform paper white: a faint gradient, far below the blank threshold. */
function nearBlank(): string {
  return svg(`<defs>${gradient('paper', ['#f3f1ec', '#eeece6'])}</defs><rect width="${W}" height="${H}" fill="url(#paper)"/>`);
}

function smallBalloon(): string {
  return svg(
    `<rect width="120" height="90" fill="#86c5ef"/><ellipse cx="60" cy="38" rx="18" ry="22" fill="#d7263d"/>` +
      `<path d="M60 60 q-4 12 2 26" stroke="#444" stroke-width="1" fill="none"/>`,
    120,
    90,
  );
}

const SCENES: Scene[] = [
  { name: 'sunset', expect: 'ok', svg: sunsetOverHills(), caption: 'the sun sets behind rolling green hills under an orange and purple evening sky, with birds flying' },
  { name: 'skyline', expect: 'ok', svg: citySkyline(), caption: 'a city skyline at night with lit office windows reflected in the river under a crescent moon' },
  { name: 'sailboat', expect: 'ok', svg: sailboat(), caption: 'a small sailboat with white sails and a red hull on a calm blue sea on a sunny day' },
  { name: 'bar-chart', expect: 'ok', svg: barChart(), caption: 'a bar chart of cups of coffee sold per day from monday to friday, highest on thursday' },
  { name: 'forest', expect: 'ok', svg: forest(), caption: 'a sandy path leading into a forest of tall pine trees on a bright morning' },
  { name: 'kitchen-table', expect: 'ok', svg: kitchenTable(), caption: 'a blue bowl of apples, an orange and a banana on a wooden kitchen table beside a white mug and a window' },
  { name: 'mountain-lake', expect: 'ok', svg: mountainLake(), caption: 'snow capped mountains reflected in a still blue lake lined with pine trees' },
  { name: 'street', expect: 'ok', svg: streetWithHouses(), caption: 'a quiet street of colourful houses with pitched roofs and trees on a sunny day' },
  { name: 'blank-paper', expect: 'blank', svg: nearBlank(), caption: 'a blank sheet of paper' },
  { name: 'tiny-balloon', expect: 'too-small', svg: smallBalloon(), width: 120, height: 90, caption: 'a red balloon against a blue sky' },
];

async function main(): Promise<void> {
  const dir = path.join(OUT, '00000');
  await rm(OUT, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const imageConfig = imageSchema.parse({});

  for (const [i, scene] of SCENES.entries()) {
    const key = String(i).padStart(9, '0');
    const jpeg = await sharp(Buffer.from(scene.svg)).flatten({ background: '#ffffff' }).jpeg({ quality: 85, mozjpeg: false }).toBuffer();
    if (jpeg.length > MAX_BYTES) throw new Error(`${scene.name}: ${jpeg.length} bytes, above ${MAX_BYTES}`);

    // Check the quickstart will show what it is meant to: 8 accepted images, then the 2 rejections.
    const verdict = await normalizeImage(jpeg, imageConfig);
    const got = verdict.ok ? 'ok' : verdict.reason.slice(0, verdict.reason.indexOf(':'));
    if (got !== scene.expect) throw new Error(`${scene.name}: the image stage says '${got}', expected '${scene.expect}'`);

    const width = scene.width ?? W;
    const height = scene.height ?? H;
    const sidecar = {
      url: `https://example.com/mmif-samples/${scene.name}.jpg`,
      caption: scene.caption,
      key,
      status: 'success',
      error_message: null,
      width,
      height,
      original_width: width,
      original_height: height,
      sha256: sha256Hex(jpeg),
    };
    await writeFile(path.join(dir, `${key}.jpg`), jpeg);
    await writeFile(path.join(dir, `${key}.txt`), scene.caption);
    await writeFile(path.join(dir, `${key}.json`), `${JSON.stringify(sidecar, null, 2)}\n`);
    console.log(`${key}.jpg  ${String(jpeg.length).padStart(6)} bytes  ${scene.expect.padEnd(9)}  ${scene.name}`);
  }
}

await main();
