// Types of app-build.js (plain JavaScript, so that the command runs it without a TypeScript loader).
export declare const ROOT: string;
export declare const BUILDS_DIR: string;
export declare function freshBuild(srcDir?: string, buildsDir?: string, packageJson?: string): string | undefined;
export declare function buildApp(root?: string, buildsDir?: string): Promise<string>;
