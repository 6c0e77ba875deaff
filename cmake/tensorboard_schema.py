"""Writes the TensorBoard event schema, as the installed tensorboard package defines it, to a
protobuf FileDescriptorSet (argv[1]) for protoc --descriptor_set_in.

The tensorboard wheel ships its schema compiled (tensorboard/compat/proto/*_pb2.py, each holding
its serialized FileDescriptorProto), not as .proto text; this script takes the descriptors of
event.proto and everything it imports, dependencies first. Prints the file names, ';'-separated.
"""
import sys

from google.protobuf import descriptor_pb2
from tensorboard.compat.proto import event_pb2


def main(out_path):
    schema = descriptor_pb2.FileDescriptorSet()
    seen = set()

    def add(file_descriptor):
        if file_descriptor.name in seen:
            return
        seen.add(file_descriptor.name)
        for dependency in file_descriptor.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file_descriptor.CopyToProto(proto)
        schema.file.append(proto)

    add(event_pb2.DESCRIPTOR)
    with open(out_path, "wb") as out:
        out.write(schema.SerializeToString())
    print(";".join(f.name for f in schema.file))


if __name__ == "__main__":
    main(sys.argv[1])
