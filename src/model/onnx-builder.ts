// A tiny ONNX graph builder over onnx-buf's generated protobuf types.
// The graphs specconf writes are straight-line, except the hybrid models' recurrence (a Loop over a forward's
// rows: mamba2-graph.ts), whose body is a subgraph built by a child builder; appending nodes and handing back
// output names is all we need, and it keeps the model writers readable.
import { create, toBinary } from "@bufbuild/protobuf";
import {
  AttributeProto_AttributeType,
  GraphProtoSchema,
  ModelProtoSchema,
  NodeProtoSchema,
  TensorProto_DataType,
  TensorProtoSchema,
  ValueInfoProtoSchema,
  type AttributeProto,
  type GraphProto,
  type NodeProto,
  type TensorProto,
  type ValueInfoProto,
} from "onnx-buf";
import type { Dtype } from "./spec.ts";

// Opset 23: RMSNormalization, RotaryEmbedding and Attention (one node each instead of many; graphs.ts says why).
export const OPSET_VERSION = 23n;
export const IR_VERSION = 11n;

/** A dimension: a fixed size or a symbolic name (dynamic). */
export type Dim = number | string;
type AttrValue = number | number[] | string | { graph: GraphProto };
type ElementType = Dtype | "int64" | "bool";

function elementType(dtype: ElementType): number {
  if (dtype === "float32") return TensorProto_DataType.FLOAT;
  if (dtype === "float64") return TensorProto_DataType.DOUBLE;
  if (dtype === "bool") return TensorProto_DataType.BOOL;
  return TensorProto_DataType.INT64;
}

function valueInfo(name: string, dtype: ElementType, dims: readonly Dim[]): ValueInfoProto {
  return create(ValueInfoProtoSchema, {
    name,
    type: {
      value: {
        case: "tensorType",
        value: {
          elemType: elementType(dtype),
          shape: {
            dim: dims.map((d) =>
              typeof d === "number"
                ? { value: { case: "dimValue" as const, value: BigInt(d) } }
                : { value: { case: "dimParam" as const, value: d } },
            ),
          },
        },
      },
    },
  });
}

function attribute(name: string, value: AttrValue): AttributeProto {
  if (typeof value === "object" && !Array.isArray(value))
    return { name, type: AttributeProto_AttributeType.GRAPH, g: value.graph } as AttributeProto;
  if (typeof value === "string") {
    return { name, type: AttributeProto_AttributeType.STRING, s: new TextEncoder().encode(value) } as AttributeProto;
  }
  if (Array.isArray(value)) {
    return { name, type: AttributeProto_AttributeType.INTS, ints: value.map(BigInt) } as AttributeProto;
  }
  if (Number.isInteger(value)) {
    return { name, type: AttributeProto_AttributeType.INT, i: BigInt(value) } as AttributeProto;
  }
  return { name, type: AttributeProto_AttributeType.FLOAT, f: value } as AttributeProto;
}

export class GraphBuilder {
  private readonly nodes: NodeProto[] = [];
  private readonly initializers: TensorProto[] = [];
  private readonly inputs: ValueInfoProto[] = [];
  private readonly outputs: ValueInfoProto[] = [];
  private counter = 0;

  constructor(
    readonly dtype: Dtype,
    /** Prefixes fresh names: a subgraph's builder must not reuse its parent's names (ONNX scoping). */
    private readonly prefix = "",
  ) {}

  input(name: string, dtype: ElementType, dims: readonly Dim[]): string {
    this.inputs.push(valueInfo(name, dtype, dims));
    return name;
  }

  output(name: string, dtype: ElementType, dims: readonly Dim[]): void {
    this.outputs.push(valueInfo(name, dtype, dims));
  }

  /** A float initializer in the graph's dtype (values are rounded to float32 when the graph is float32). */
  weight(name: string, dims: readonly number[], values: ArrayLike<number>): string {
    const expected = dims.reduce((a, b) => a * b, 1);
    if (values.length !== expected) throw new Error(`weight ${name}: ${values.length} values for dims [${dims}]`);
    // A fresh array (the constructors' fast copy; the same rounding as element-wise conversion).
    const typed = this.dtype === "float32" ? new Float32Array(values) : new Float64Array(values);
    this.pushTensor(name, this.dtype, dims, new Uint8Array(typed.buffer));
    return name;
  }

  int64(name: string, dims: readonly number[], values: readonly number[]): string {
    const typed = BigInt64Array.from(values.map(BigInt));
    this.pushTensor(name, "int64", dims, new Uint8Array(typed.buffer.slice(0)));
    return name;
  }

  /** A boolean scalar initializer (a Loop's condition). */
  bool(name: string, value: boolean): string {
    this.pushTensor(name, "bool", [], new Uint8Array([value ? 1 : 0]));
    return name;
  }

  scalar(value: number): string {
    return this.weight(this.fresh("c"), [], [value]);
  }

  private pushTensor(name: string, dtype: ElementType, dims: readonly number[], rawData: Uint8Array<ArrayBuffer>) {
    this.initializers.push(
      create(TensorProtoSchema, { name, dataType: elementType(dtype), dims: dims.map(BigInt), rawData }),
    );
  }

  fresh(prefix: string): string {
    this.counter += 1;
    return `${this.prefix}${prefix}_${this.counter}`;
  }

  /** A child builder for a control-flow body: its fresh names carry `prefix`; it reads the parent's names. */
  child(prefix: string): GraphBuilder {
    return new GraphBuilder(this.dtype, `${this.prefix}${prefix}`);
  }

  /** This builder's nodes as a subgraph (a Loop's body). */
  toGraph(graphName: string): GraphProto {
    return create(GraphProtoSchema, {
      name: graphName,
      node: this.nodes,
      initializer: this.initializers,
      input: this.inputs,
      output: this.outputs,
    });
  }

  /** Appends a node; returns its output names (fresh unless given). */
  node(
    opType: string,
    inputs: readonly string[],
    attrs: Record<string, AttrValue> = {},
    outputs?: readonly string[],
    numOutputs = 1,
  ): string[] {
    const outs = outputs ? [...outputs] : Array.from({ length: numOutputs }, () => this.fresh(opType.toLowerCase()));
    this.nodes.push(
      create(NodeProtoSchema, {
        opType,
        input: [...inputs],
        output: outs,
        attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
      }),
    );
    return outs;
  }

  /** The node appended last (to name its output after the fact). */
  lastNode(): NodeProto {
    return this.nodes[this.nodes.length - 1];
  }

  /** Single-output node shorthand. */
  op(opType: string, inputs: readonly string[], attrs: Record<string, AttrValue> = {}, output?: string): string {
    return this.node(opType, inputs, attrs, output ? [output] : undefined)[0];
  }

  toBytes(graphName: string): Uint8Array {
    const model = create(ModelProtoSchema, {
      irVersion: IR_VERSION,
      producerName: "specconf",
      opsetImport: [{ domain: "", version: OPSET_VERSION }],
      graph: this.toGraph(graphName),
    });
    return toBinary(ModelProtoSchema, model);
  }
}
