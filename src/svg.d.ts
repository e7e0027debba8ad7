// SVG files are imported as their text (the builder's and jest's loaders both do so).
declare module '*.svg' {
  const value: string;
  export default value;
}
