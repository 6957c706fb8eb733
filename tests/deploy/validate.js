// SPDX-License-Identifier: GPL-2.0-or-later
// validate.js [--docs OUT] MODULES_DIR FILE... - check Kubernetes manifests against the
// API's schemas, as kubernetes-models generates them from the Kubernetes
// OpenAPI document (one validator per kind: types, enums, required fields,
// formats), plus what those validators leave out:
//
//   - unknown fields: the generated validators accept any extra key, as
//     the API server does unless asked to be strict, so a misspelt
//     `hostUser: false` would pass and silently do nothing.  Each object
//     is walked against the property lists of the package's type
//     declarations (.d.ts), which are generated from the same document;
//   - YAML that reads differently as YAML 1.1 (what kubectl's parser
//     follows: 0400 is octal, yes is true) and as YAML 1.2, and duplicate
//     keys.
//
// Prints one line per document, "ok FILE#N KIND NAME" or "error FILE#N:
// PATH: WHAT", and with --docs the documents that passed, as JSON Lines,
// to OUT (tests/deploy.sh reads them there).  Exit 0 when every document
// passed, 1 otherwise, 2 on a usage or set-up error.
'use strict';
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

const args = process.argv.slice(2);
const docsOut = args[0] === '--docs' ? (args.shift(), args.shift()) : null;
const [modulesDir, ...files] = args;
if (!modulesDir || files.length === 0) {
	console.error('usage: validate.js [--docs OUT] MODULES_DIR FILE...');
	process.exit(2);
}
const req = createRequire(path.join(path.resolve(modulesDir), 'package.json'));
const YAML = req('yaml');
const modelsDir = path.dirname(req.resolve('kubernetes-models/package.json'));
const machineryDir = path.dirname(req.resolve('@kubernetes-models/apimachinery/package.json'));

// apiVersion "apps/v1" lives in kubernetes-models/apps/v1, the core group
// ("v1") in kubernetes-models/v1.
function modelFile(apiVersion, kind) {
	if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !/^[A-Za-z0-9]+$/.test(kind))
		return null;
	const parts = apiVersion.split('/');
	if (parts.length > 2 || parts.some((p) => !/^[a-z0-9.-]+$/.test(p)))
		return null;
	return path.join(modelsDir, ...parts, kind);
}

// The property lists of the interfaces a .d.ts file declares:
// { IName: { prop: typeText } } and the file each imported name is in.
const declCache = new Map();
function readDecl(file) {
	if (declCache.has(file))
		return declCache.get(file);
	const text = fs.readFileSync(file, 'utf8');
	const imports = {};
	const ifaces = {};
	for (const m of text.matchAll(/^import \{ ([^}]+) \} from "([^"]+)";$/gm)) {
		let target = m[2];
		if (target.startsWith('.'))
			target = path.resolve(path.dirname(file), target);
		else if (target.startsWith('@kubernetes-models/apimachinery/'))
			target = path.join(machineryDir, target.slice('@kubernetes-models/apimachinery/'.length));
		else
			continue;
		for (const name of m[1].split(',').map((s) => s.trim()))
			imports[name] = target + '.d.ts';
	}
	let cur = null;
	for (const line of text.split('\n')) {
		const head = /^export interface (\w+)\b/.exec(line);
		if (head) {
			cur = ifaces[head[1]] = {};
			continue;
		}
		if (cur && line === '}') {
			cur = null;
			continue;
		}
		const prop = /^ {4}"([^"]+)"\??: (.*?);?$/.exec(line);
		if (cur && prop)
			cur[prop[1]] = prop[2];
	}
	const decl = { imports, ifaces };
	declCache.set(file, decl);
	return decl;
}

// The interface a property's type names, if it is one of the API's
// objects (or an array of them); maps ({ [key: string]: ... }), strings,
// numbers and quantities are leaves.
function resolveType(decl, typeText) {
	const m = /^(?:Array<)?(I\w+)>?$/.exec(typeText);
	if (!m)
		return null;
	const file = decl.imports[m[1]];
	if (!file || !fs.existsSync(file))
		return null;
	const d = readDecl(file);
	// The file declares it under its short name (IPodSpec) and exports
	// the long one (IIoK8sApiCoreV1PodSpec) as an alias.
	const alias = new RegExp(`export \\{ (\\w+) as ${m[1]}\\b`).exec(fs.readFileSync(file, 'utf8'));
	const name = alias ? alias[1] : m[1];
	return d.ifaces[name] ? { decl: d, props: d.ifaces[name] } : null;
}

function walkUnknown(value, t, where, errors) {
	if (Array.isArray(value)) {
		value.forEach((v, i) => walkUnknown(v, t, `${where}/${i}`, errors));
		return;
	}
	if (value === null || typeof value !== 'object')
		return;
	for (const [k, v] of Object.entries(value)) {
		if (!Object.prototype.hasOwnProperty.call(t.props, k)) {
			errors.push(`${where}/${k}: unknown field`);
			continue;
		}
		const sub = resolveType(t.decl, t.props[k]);
		if (sub)
			walkUnknown(v, sub, `${where}/${k}`, errors);
	}
}

function check(doc) {
	const errors = [];
	const base = modelFile(doc && doc.apiVersion, doc && doc.kind);
	if (!base || !fs.existsSync(base + '.js') || !fs.existsSync(base + '.d.ts'))
		return [`apiVersion ${JSON.stringify(doc && doc.apiVersion)} kind ${JSON.stringify(doc && doc.kind)}: no such kind in the API`];
	const Model = req(base + '.js')[doc.kind];
	try {
		new Model(doc).validate();
	} catch (e) {
		for (const line of String(e.message || e).split('\n'))
			if (line.trim())
				errors.push(line.trim());
	}
	const decl = readDecl(base + '.d.ts');
	const top = decl.ifaces['I' + doc.kind];
	if (!top)
		errors.push(`${doc.kind}: no declaration in ${base}.d.ts`);
	else
		walkUnknown(doc, { decl, props: top }, '', errors);
	return errors;
}

const docs = [];
let failed = 0;
for (const file of files) {
	const text = fs.readFileSync(file, 'utf8');
	const name = path.basename(file);
	const opts = { uniqueKeys: true, prettyErrors: false };
	const v11 = YAML.parseAllDocuments(text, { ...opts, version: '1.1' });
	const v12 = YAML.parseAllDocuments(text, { ...opts, version: '1.2' });
	if (!Array.isArray(v11) || !Array.isArray(v12)) {
		console.log(`error ${name}: not a YAML stream`);
		failed++;
		continue;
	}
	v11.forEach((d, i) => {
		const at = `${name}#${i + 1}`;
		const problems = [...d.errors, ...d.warnings].map((e) => e.message.split('\n')[0]);
		const obj = d.toJS();
		if (JSON.stringify(obj) !== JSON.stringify(v12[i] && v12[i].toJS()))
			problems.push('reads differently as YAML 1.1 and 1.2 (an octal like 0400, yes/no, a sexagesimal number): write it unambiguously');
		if (problems.length === 0)
			problems.push(...check(obj));
		if (problems.length) {
			failed++;
			for (const p of problems)
				console.log(`error ${at}: ${p}`);
			return;
		}
		console.log(`ok ${at} ${obj.kind} ${obj.metadata && obj.metadata.name}`);
		docs.push(JSON.stringify({ file: name, index: i + 1, doc: obj }) + '\n');
	});
}
if (docsOut)
	fs.writeFileSync(docsOut, docs.join(''));
process.exitCode = failed ? 1 : 0;
