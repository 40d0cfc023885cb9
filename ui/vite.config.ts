import { defineConfig } from "vite";

// The app loads only bundled files (tauri.conf.json's CSP allows no remote content).
export default defineConfig({
  base: "./",
  clearScreen: false,
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", chunkSizeWarningLimit: 1500 },
  worker: { format: "es" },
});
