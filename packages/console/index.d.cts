/** Absolute path of the console's build output (`vite build`), served by the platform under `/console/`. */
export declare const distDir: string;
